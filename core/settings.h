/* settings.h: the settings, read once from the environment (core/settings.c). The only place
 * of libfastgemm that reads environment variables. */
#ifndef FG_SETTINGS_H
#define FG_SETTINGS_H

#include "common/fg.h"

/* The settings, read at the first call (thread-safe). */
FG_HIDDEN const fg_settings *fg_settings_get(void);
/* "auto", "gpu" or "cpu" (any case): the mode, else -1. */
FG_HIDDEN int fg_parse_mode(const char *s);
/* fastgemm_set_mode: the mode of the calls that follow. */
FG_HIDDEN void fg_settings_set_mode(fg_mode mode);
FG_HIDDEN fg_mode fg_settings_mode(const fg_settings *s);
/* The device of calls without device operands: FASTGEMM_DEVICE, else the OpenMP runtime's
 * default device when the process has one (its device n is CUDA device n), else 0. */
FG_HIDDEN int fg_default_device(const fg_settings *s);

#endif
