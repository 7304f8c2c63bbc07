/* TFLM's application API (tflite::MicroInterpreter, MicroMutableOpResolver, TfLiteTensor, ...)
 * over the microarena runtime (microarena.h), so a TFLM application switches by changing its
 * include path. C++11, header only, no heap, no exceptions, no RTTI, no C++ library headers.
 *
 * Where it differs from TFLM (docs/migrate_from_tflm.md):
 * - GetModel(buf) does not know the model's size: the runtime then checks the model against
 *   the memory up to the arena (or 2 GiB), trusting it as TFLM does; GetModel(buf, size)
 *   (an extension) checks it against its real size.
 * - arena_used_bytes() is the runtime's head + tail (its "Arena allocation total").
 * - Only subgraph 0's inputs and outputs, at most MICROARENA_TFLM_MAX_IO of each.
 * - MicroPrintf prints through the application's DebugLog(const char *s) as TFLM does. */
#ifndef MICROARENA_TFLM_H
#define MICROARENA_TFLM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../microarena.h"
#include "../ma_ops.h"
#include "tflm_ops.h"

#ifndef MICROARENA_TFLM_MAX_IO
#define MICROARENA_TFLM_MAX_IO 16
#endif

extern "C" void DebugLog(const char *s); /* the application's (TFLM's porting contract) */

typedef enum TfLiteStatus {
  kTfLiteOk = 0,
  kTfLiteError = 1,
  kTfLiteDelegateError = 2,
  kTfLiteApplicationError = 3,
} TfLiteStatus;

typedef enum {
  kTfLiteNoType = 0, kTfLiteFloat32 = 1, kTfLiteInt32 = 2, kTfLiteUInt8 = 3, kTfLiteInt64 = 4,
  kTfLiteString = 5, kTfLiteBool = 6, kTfLiteInt16 = 7, kTfLiteComplex64 = 8, kTfLiteInt8 = 9,
  kTfLiteFloat16 = 10, kTfLiteFloat64 = 11, kTfLiteComplex128 = 12, kTfLiteUInt64 = 13,
  kTfLiteResource = 14, kTfLiteVariant = 15, kTfLiteUInt32 = 16, kTfLiteUInt16 = 17,
  kTfLiteInt4 = 18,
} TfLiteType;

typedef struct TfLiteIntArray {
  int size;
  int data[MA_MAX_DIMS];
} TfLiteIntArray;

typedef struct TfLiteQuantizationParams {
  float scale;
  int32_t zero_point;
} TfLiteQuantizationParams;

typedef union TfLitePtrUnion {
  int32_t *i32;
  uint32_t *u32;
  int64_t *i64;
  uint64_t *u64;
  float *f;
  char *raw;
  const char *raw_const;
  uint8_t *uint8;
  bool *b;
  int16_t *i16;
  uint16_t *ui16;
  int8_t *int8;
  void *data;
} TfLitePtrUnion;

typedef struct TfLiteTensor {
  TfLiteType type;
  TfLitePtrUnion data;
  TfLiteIntArray *dims;
  TfLiteQuantizationParams params;
  size_t bytes;
} TfLiteTensor;

inline void MicroPrintf(const char *format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof line, format, args);
  va_end(args);
  size_t n = strlen(line);
  if (n + 1 < sizeof line) {
    line[n] = '\n';
    line[n + 1] = '\0';
  }
  DebugLog(line);
}

namespace tflite {

// The model as the runtime needs it: its bytes and how many there may be.
struct Model {
  const void *data;
  size_t size;
};

namespace internal {
// One Model per GetModel call site would need the heap; a small ring of slots serves the
// applications that load at most this many models (each GetModel takes the next slot).
struct ModelSlots {
  Model slot[4];
  unsigned next;
};
inline ModelSlots &model_slots() {
  static ModelSlots slots;
  return slots;
}
}  // namespace internal

inline const Model *GetModel(const void *buf, size_t size) {
  internal::ModelSlots &s = internal::model_slots();
  Model &m = s.slot[s.next++ % 4];
  m.data = buf;
  m.size = size;
  return &m;
}
inline const Model *GetModel(const void *buf) { return GetModel(buf, 0x7fffffffu); }

// TFLM's board set-up hook: the runtime needs none.
inline void InitializeTarget() {}

class MicroOpResolver {
 public:
  virtual bool HasBuiltin(int32_t code) const = 0;

 protected:
  ~MicroOpResolver() {}
};

template <unsigned int tOpCount>
class MicroMutableOpResolver : public MicroOpResolver {
 public:
  MicroMutableOpResolver() : count_(0) {}

#define MICROARENA_TFLM_ADD(Name, CODE) \
  TfLiteStatus Add##Name() { return AddBuiltin(MA_OP_##CODE, #Name); }
  MICROARENA_TFLM_OPS(MICROARENA_TFLM_ADD)
#undef MICROARENA_TFLM_ADD

  bool HasBuiltin(int32_t code) const {
    for (unsigned int i = 0; i < count_; i++)
      if (codes_[i] == code) return true;
    return false;
  }
  unsigned int GetRegistrationLength() const { return count_; }

 private:
  TfLiteStatus AddBuiltin(int32_t code, const char *name) {
    if (HasBuiltin(code)) {
      MicroPrintf("Calling Add%s twice is not supported (Op: #%d).", name, (int)code);
      return kTfLiteError;
    }
    if (count_ >= tOpCount) {
      MicroPrintf("Couldn't register builtin op #%d, resolver size \nis too small (%d).",
                  (int)code, (int)tOpCount);
      return kTfLiteError;
    }
    codes_[count_++] = code;
    return kTfLiteOk;
  }
  int32_t codes_[tOpCount > 0 ? tOpCount : 1];
  unsigned int count_;
};

namespace internal {
// Reads the model's operator codes (flatbuffer: Model field 1, OperatorCode fields 0 and 3).
// Called after ma_open accepted the model, so the offsets are known to be in bounds.
inline uint32_t u32(const uint8_t *b, uint32_t at) {
  return (uint32_t)b[at] | (uint32_t)b[at + 1] << 8 | (uint32_t)b[at + 2] << 16 |
         (uint32_t)b[at + 3] << 24;
}
inline uint32_t field(const uint8_t *b, uint32_t table, unsigned id) {
  uint32_t vt = table - u32(b, table);
  uint32_t vsize = (uint32_t)b[vt] | (uint32_t)b[vt + 1] << 8;
  uint32_t at = 4 + 2 * id;
  if (at + 2 > vsize) return 0;
  uint32_t off = (uint32_t)b[vt + at] | (uint32_t)b[vt + at + 1] << 8;
  return off ? table + off : 0;
}
// The first operator code the resolver lacks, or -1 when it has them all.
inline int32_t missing_op(const uint8_t *b, const MicroOpResolver &r) {
  uint32_t codes = field(b, u32(b, 0), 1);
  if (!codes) return -1;
  codes += u32(b, codes);
  uint32_t n = u32(b, codes);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t at = codes + 4 + 4 * i;
    uint32_t oc = at + u32(b, at);
    uint32_t f0 = field(b, oc, 0), f3 = field(b, oc, 3);
    int32_t code = f0 ? (int8_t)b[f0] : 0;
    int32_t wide = f3 ? (int32_t)u32(b, f3) : 0;
    if (wide > code) code = wide;
    if (code == MA_OP_CUSTOM) continue;  // custom operators resolve by name in the runtime
    if (!r.HasBuiltin(code)) return code;
  }
  return -1;
}
inline void print_line(void *, const char *line) {
  if (strncmp(line, "[RecordingMicroAllocator]", 25) == 0) MicroPrintf("%s", line);
}
}  // namespace internal

class MicroInterpreter {
 public:
  MicroInterpreter(const Model *model, const MicroOpResolver &op_resolver, uint8_t *tensor_arena,
                   size_t tensor_arena_size)
      : model_(model), resolver_(op_resolver), arena_(tensor_arena),
        arena_size_(tensor_arena_size), it_(0), n_in_(0), n_out_(0) {
    msg_[0] = '\0';
  }

  TfLiteStatus initialization_status() const {
    return model_ && model_->data && arena_ ? kTfLiteOk : kTfLiteError;
  }

  TfLiteStatus AllocateTensors() {
    it_ = 0;
    if (initialization_status() != kTfLiteOk) {
      MicroPrintf("Failed starting model allocation.\n");
      return kTfLiteError;
    }
    ma_status st = ma_open(&it_, model_->data, ModelBound(), arena_, arena_size_, msg_,
                           sizeof msg_);
    if (st != MA_OK) {
      it_ = 0;
      MicroPrintf("%s", msg_);
      MicroPrintf("Failed starting model allocation.\n");
      return kTfLiteError;
    }
    int32_t missing = internal::missing_op((const uint8_t *)model_->data, resolver_);
    if (missing >= 0) {
      it_ = 0;
      MicroPrintf("Didn't find op for builtin opcode '%s'", ma_op_name(missing));
      MicroPrintf("Failed to get registration from op code %s\n ", ma_op_name(missing));
      MicroPrintf("Failed starting model allocation.\n");
      return kTfLiteError;
    }
    n_in_ = Bind(ma_num_inputs(it_), true, in_, in_dims_);
    n_out_ = Bind(ma_num_outputs(it_), false, out_, out_dims_);
    return kTfLiteOk;
  }

  TfLiteStatus Invoke() {
    if (!it_) {
      MicroPrintf("Invoke() called after initialization failed\n");
      return kTfLiteError;
    }
    if (ma_invoke(it_) != MA_OK) {
      MicroPrintf("%s", ma_error(it_));
      return kTfLiteError;
    }
    return kTfLiteOk;
  }

  TfLiteTensor *input(size_t index) {
    return index < n_in_ ? &in_[index] : Missing("Input", index, n_in_);
  }
  TfLiteTensor *output(size_t index) {
    return index < n_out_ ? &out_[index] : Missing("Output", index, n_out_);
  }
  size_t inputs_size() const { return n_in_; }
  size_t outputs_size() const { return n_out_; }

  size_t arena_used_bytes() const {
    if (!it_) return 0;
    ma_arena_stats s;
    ma_arena_stats_get(it_, &s);
    return s.total;
  }

  // The runtime's own interpreter, for what TFLM's API lacks (ma_report, ma_set_op_hook).
  ma_interp *microarena() const { return it_; }

 private:
  // The model's size, or for GetModel(buf) a bound on it: the runtime tells constant data
  // from arena data by whether it lies inside the model, so the bound must stop at the arena.
  size_t ModelBound() const {
    uintptr_t model = (uintptr_t)model_->data, arena = (uintptr_t)arena_;
    size_t bound = model_->size;
    if (arena > model && arena - model < bound) bound = (size_t)(arena - model);
    if (UINTPTR_MAX - model < bound) bound = (size_t)(UINTPTR_MAX - model);
    return bound;
  }
  TfLiteTensor *Missing(const char *what, size_t index, size_t size) {
    MicroPrintf("%s index %d out of range (length is %d)", what, (int)index, (int)size);
    return 0;
  }
  // Fills TFLM-shaped views once: their addresses and data pointers stay put across invokes
  // (the runtime's tensors live at planned arena offsets), as TFLM's do.
  size_t Bind(int32_t count, bool inputs, TfLiteTensor *views, TfLiteIntArray *dims) {
    size_t n = count < 0 ? 0 : (size_t)count;
    if (n > MICROARENA_TFLM_MAX_IO) n = MICROARENA_TFLM_MAX_IO;
    for (size_t i = 0; i < n; i++) {
      const ma_tensor *t = inputs ? ma_input(it_, (int32_t)i) : ma_output(it_, (int32_t)i);
      TfLiteTensor &v = views[i];
      v.type = Type(t->type);
      v.data.data = t->data;
      v.bytes = t->bytes;
      dims[i].size = t->ndims;
      for (int d = 0; d < t->ndims; d++) dims[i].data[d] = t->dims[d];
      v.dims = &dims[i];
      v.params.scale = t->quant.scale ? t->quant.scale[0] : 0.0f;
      v.params.zero_point = t->quant.zero_point ? (int32_t)t->quant.zero_point[0] : 0;
    }
    return n;
  }
  static TfLiteType Type(uint8_t schema_type) {
    // The schema's TensorType to TfLiteType: equal up to INT8, then FLOAT16 moves behind.
    static const TfLiteType map[] = {
        kTfLiteFloat32, kTfLiteFloat16, kTfLiteInt32,      kTfLiteUInt8,   kTfLiteInt64,
        kTfLiteString,  kTfLiteBool,    kTfLiteInt16,      kTfLiteComplex64, kTfLiteInt8,
        kTfLiteFloat64, kTfLiteComplex128, kTfLiteUInt64,  kTfLiteResource, kTfLiteVariant,
        kTfLiteUInt32,  kTfLiteUInt16,  kTfLiteInt4};
    return schema_type < sizeof map / sizeof map[0] ? map[schema_type] : kTfLiteNoType;
  }

  const Model *model_;
  const MicroOpResolver &resolver_;
  uint8_t *arena_;
  size_t arena_size_;
  ma_interp *it_;
  char msg_[192];
  TfLiteTensor in_[MICROARENA_TFLM_MAX_IO], out_[MICROARENA_TFLM_MAX_IO];
  TfLiteIntArray in_dims_[MICROARENA_TFLM_MAX_IO], out_dims_[MICROARENA_TFLM_MAX_IO];
  size_t n_in_, n_out_;

 protected:
  ma_interp *interp() const { return it_; }
};

class RecordingMicroAllocator {
 public:
  explicit RecordingMicroAllocator(const MicroInterpreter &owner) : owner_(owner) {}
  // TFLM's report lines, which `python -m host.record --target` reads.
  void PrintAllocations() const {
    if (owner_.microarena()) ma_report(owner_.microarena(), internal::print_line, 0);
  }

 private:
  const MicroInterpreter &owner_;
};

class RecordingMicroInterpreter : public MicroInterpreter {
 public:
  RecordingMicroInterpreter(const Model *model, const MicroOpResolver &op_resolver,
                            uint8_t *tensor_arena, size_t tensor_arena_size)
      : MicroInterpreter(model, op_resolver, tensor_arena, tensor_arena_size), allocator_(*this) {}
  const RecordingMicroAllocator &GetMicroAllocator() const { return allocator_; }

 private:
  RecordingMicroAllocator allocator_;
};

}  // namespace tflite

#endif
