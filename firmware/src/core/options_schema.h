/* Field kinds of BuiltinOptions tables (see options_schema.c). */
#ifndef MA_OPTIONS_SCHEMA_H
#define MA_OPTIONS_SCHEMA_H

#include <stdint.h>

/* The kind letter of field `slot` in options union `type`, 0 if the schema has no such field. */
char ma_option_kind(uint8_t type, int slot);

#endif
