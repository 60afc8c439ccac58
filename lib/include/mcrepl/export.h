/* Symbol visibility: only what carries MCREPL_API is exported. */
#ifndef MCREPL_EXPORT_H
#define MCREPL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define MCREPL_API __attribute__((visibility("default")))
#else
#define MCREPL_API
#endif

#endif
