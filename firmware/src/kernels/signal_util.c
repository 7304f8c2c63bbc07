/* Option and tensor checks shared by the Signal* kernels. */
#include "signal_util.h"

#include <stddef.h>

#include "flexbuffer.h"
#include "kernel_util.h"

ma_status mak_custom_option(struct ma_context *ctx, const ma_node *node, const char *op,
                            const char *key, int64_t lo, int64_t hi, int32_t *value) {
  mak_flex_map m;
  int64_t v;
  if (mak_flex_open(&m, node->custom_options, node->custom_options_len) != 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: custom options are not a flexbuffer map", op);
  if (mak_flex_int(&m, key, &v) != 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: option '%s' is missing or not an integer", op, key);
  if (v < lo || v > hi)
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: option %s = %ld is outside [%ld, %ld]", op, key,
                   (long)v, (long)lo, (long)hi);
  *value = (int32_t)v;
  return MA_OK;
}

ma_status mak_signal_tensor(struct ma_context *ctx, const char *op, const char *what,
                            const ma_tensor *t, uint8_t type, int32_t ndims) {
  if (t == NULL) return ma_fail(ctx, MA_ERR_MODEL, "%s: %s is missing", op, what);
  ma_status st = mak_check_type(ctx, op, what, t, type);
  if (st != MA_OK) return st;
  if (ndims >= 0 && t->ndims != ndims)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %s has %d dimensions, expected %d", op, what,
                   (int)t->ndims, (int)ndims);
  return MA_OK;
}
