/*
 * libmcrepl version. The Makefile reads the soname and the pkg-config
 * Version from these three lines; change them nowhere else.
 */
#ifndef MCREPL_VERSION_H
#define MCREPL_VERSION_H

#define MCREPL_VERSION_MAJOR 0
#define MCREPL_VERSION_MINOR 3
#define MCREPL_VERSION_PATCH 0

#endif
