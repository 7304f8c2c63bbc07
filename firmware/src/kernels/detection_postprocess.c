/* TFLite_Detection_PostProcess (custom operator, float32), with the outputs of TFLM's
 * reference kernel: each box's centre-size encoding is decoded against its anchor (in double,
 * as TFLM), then non-max suppression keeps the best-scoring boxes that do not overlap,
 * either once per class ("regular", option use_regular_nms) or once over each box's best
 * class ("fast", the default).
 *
 * Orders are TFLM's: boxes above the score threshold (never NaN) are taken by score, higher
 * first, ties by box index (TFLM's stable merge sort); the regular NMS's running top list by
 * score, ties by position (TFLM's partial sort), merged rather than re-sorted, since the
 * previous list and a class's selections are each already in that order; a box's classes by
 * TFLM's partial sort step by step (best_classes), since NaN scores make its order depend on
 * the algorithm.
 *
 * Memory: TFLM requests 11 scratch buffers sized for its worst cases (about 900 bytes per box
 * for a 90-class SSD); this kernel requests one (scratch_layout below: 29 bytes per box, plus
 * a few per detection or class). host/planning/kernels/ models both.
 *
 * Refused at open where TFLM would fail at run time or write outside its outputs: non-float
 * inputs, options out of range, outputs too small for what TFLM writes. A decoded box with
 * ymin >= ymax or xmin >= xmax fails the invocation, as in TFLM.
 */
#include <math.h>
#include <string.h>

#include "flexbuffer.h"
#include "kernel_util.h"
#include "kernels.h"

static const char OP[] = "TFLite_Detection_PostProcess";

enum { MAX_BOXES = 1 << 20, MAX_CLASSES = 1 << 16, MAX_DETECTIONS = 1 << 16 };

typedef struct {
  float score;
  int32_t box, cls;
} candidate;

typedef struct {
  int32_t max_detections, classes_per_detection, detections_per_class, num_classes;
  float score_threshold, iou_threshold;
  float scale[4]; /* y, x, h, w */
  int32_t regular;
  int32_t num_boxes, box_stride, label_offset, classes_with_background;
  int32_t scratch;
  /* Byte offsets in the scratch buffer. */
  size_t boxes, scores, keep, tmp, selected, lists, active;
} detect_data;

/* ---------------------------------------------------------------- options */

/* A numeric option as TFLM's flexbuffer reader gives it: `dflt` when absent. */
static ma_status number_option(struct ma_context *ctx, const mak_flex_map *m, const char *key,
                               double dflt, double *value) {
  const int found = mak_flex_number(m, key, value);
  if (found == 1) *value = dflt;
  if (found < 0) return ma_fail(ctx, MA_ERR_MODEL, "%s: option %s is not a number", OP, key);
  return MA_OK;
}

/* An integer option in [lo, hi] (truncated like flexbuffers' AsInt32). */
static ma_status int_option(struct ma_context *ctx, const mak_flex_map *m, const char *key,
                            int32_t dflt, int32_t lo, int32_t hi, int32_t *value) {
  double v;
  ma_status st = number_option(ctx, m, key, dflt, &v);
  if (st != MA_OK) return st;
  if (!(v >= lo && v < (double)hi + 1.0))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: option %s = %g is outside [%d, %d]", OP, key, v,
                   (int)lo, (int)hi);
  *value = (int32_t)v;
  return MA_OK;
}

static ma_status read_options(struct ma_context *ctx, const ma_node *node, detect_data *d) {
  static const char *const SCALES[4] = {"y_scale", "x_scale", "h_scale", "w_scale"};
  mak_flex_map m;
  if (mak_flex_open(&m, node->custom_options, node->custom_options_len) != 0)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: custom options are not a flexbuffer map", OP);
  double regular = 0, score, iou;
  ma_status st = number_option(ctx, &m, "use_regular_nms", 0, &regular);
  d->regular = regular != 0;
  if (st == MA_OK)
    st = int_option(ctx, &m, "max_detections", 0, 1, MAX_DETECTIONS, &d->max_detections);
  if (st == MA_OK) st = int_option(ctx, &m, "num_classes", 0, 1, MAX_CLASSES, &d->num_classes);
  /* Each mode checks only its own count, as TFLM does at run time. */
  if (st == MA_OK)
    st = int_option(ctx, &m, "max_classes_per_detection", 0, d->regular ? INT32_MIN : 1,
                    INT32_MAX, &d->classes_per_detection);
  if (st == MA_OK)
    st = int_option(ctx, &m, "detections_per_class", 100, d->regular ? 1 : INT32_MIN, INT32_MAX,
                    &d->detections_per_class);
  if (st == MA_OK) st = number_option(ctx, &m, "nms_score_threshold", 0, &score);
  if (st == MA_OK) st = number_option(ctx, &m, "nms_iou_threshold", 0, &iou);
  if (st != MA_OK) return st;
  d->score_threshold = (float)score;
  d->iou_threshold = (float)iou;
  if (!(d->iou_threshold > 0.0f && d->iou_threshold <= 1.0f))
    return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: nms_iou_threshold %g is outside (0, 1]", OP,
                   iou);
  for (int k = 0; k < 4; k++) {
    double s;
    if ((st = number_option(ctx, &m, SCALES[k], 0, &s)) != MA_OK) return st;
    d->scale[k] = (float)s;
    if (!(d->scale[k] != 0.0f && isfinite(d->scale[k]))) /* TFLM would divide by it */
      return ma_fail(ctx, MA_ERR_UNSUPPORTED, "%s: option %s = %g must be finite and non-zero",
                     OP, SCALES[k], s);
  }
  return MA_OK;
}

/* ---------------------------------------------------------------- prepare */

static ma_status check_shapes(struct ma_context *ctx, const ma_node *node, detect_data *d) {
  const ma_tensor *enc = node->inputs[0], *cls = node->inputs[1], *anchors = node->inputs[2];
  ma_status st = mak_check_input_type(ctx, OP, enc, MAK_TYPE_BIT(MA_FLOAT32), "float32");
  if (st == MA_OK) st = mak_check_type(ctx, OP, "class predictions", cls, MA_FLOAT32);
  if (st == MA_OK) st = mak_check_type(ctx, OP, "anchors", anchors, MA_FLOAT32);
  if (st != MA_OK) return st;
  if (enc->ndims != 3 || enc->dims[0] != 1 || enc->dims[2] < 4 || enc->dims[1] > MAX_BOXES)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: box encodings must be [1, boxes, >= 4]", OP);
  d->num_boxes = enc->dims[1];
  d->box_stride = enc->dims[2];
  if (cls->ndims != 3 || cls->dims[0] != 1 || cls->dims[1] != d->num_boxes)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: class predictions must be [1, %d, classes]", OP,
                   (int)d->num_boxes);
  d->classes_with_background = cls->dims[2];
  d->label_offset = d->classes_with_background - d->num_classes;
  if (d->label_offset != 0 && d->label_offset != 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: %d class predictions for num_classes %d (expected "
                   "num_classes, or one more for a background class)", OP,
                   (int)d->classes_with_background, (int)d->num_classes);
  if (anchors->ndims != 2 || anchors->dims[0] != d->num_boxes || anchors->dims[1] != 4)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: anchors must be [%d, 4]", OP, (int)d->num_boxes);
  for (int32_t i = 0; i < 4; i++) {
    if ((st = mak_check_type(ctx, OP, "output", node->outputs[i], MA_FLOAT32)) != MA_OK) return st;
  }
  /* The detections TFLM writes: regular NMS max_detections entries; fast NMS, for each of up
   * to min(boxes, max_detections) boxes, k classes at offsets k * (k * n + c) (TFLM's index). */
  const int64_t k = d->classes_per_detection < d->num_classes ? d->classes_per_detection
                                                               : d->num_classes;
  const int64_t n = d->num_boxes < d->max_detections ? d->num_boxes : d->max_detections;
  const int64_t need = d->regular ? d->max_detections : k * k * n;
  const int32_t boxes = ma_num_elements(node->outputs[0]) / 4;
  const int32_t classes = ma_num_elements(node->outputs[1]);
  const int32_t scores = ma_num_elements(node->outputs[2]);
  if (boxes < need || classes < need || scores < need || ma_num_elements(node->outputs[3]) < 1)
    return ma_fail(ctx, MA_ERR_MODEL, "%s: outputs hold %d boxes, %d classes, %d scores and %d "
                   "counts; TFLM writes up to %ld detections and 1 count", OP, (int)boxes,
                   (int)classes, (int)scores, (int)ma_num_elements(node->outputs[3]), (long)need);
  return MA_OK;
}

static size_t take(size_t *at, size_t bytes) {
  const size_t start = *at;
  *at += (bytes + 3u) & ~(size_t)3u;
  return start;
}

/* Offsets of the kernel's arrays in its one scratch buffer; returns its size. Per box: the
 * decoded box, a score, the kept indices and the merge sort's copy, an active flag. Then the
 * selected boxes of one NMS run; for regular NMS two top lists (previous and next), for fast
 * NMS one box's classes in order. */
static size_t scratch_layout(detect_data *d) {
  const size_t n = (size_t)d->num_boxes;
  const size_t limit = (size_t)(d->regular ? d->detections_per_class : d->max_detections);
  size_t at = 0;
  d->boxes = take(&at, 4 * sizeof(float) * n);
  d->scores = take(&at, sizeof(float) * n);
  d->keep = take(&at, sizeof(int32_t) * n);
  d->tmp = take(&at, sizeof(int32_t) * n);
  d->selected = take(&at, sizeof(int32_t) * (limit < n ? limit : n));
  d->lists = take(&at, d->regular ? 2 * sizeof(candidate) * (size_t)d->max_detections
                                   : sizeof(int32_t) * (size_t)d->num_classes);
  d->active = take(&at, n);
  return at;
}

static ma_status detect_prepare(struct ma_context *ctx, ma_node *node) {
  detect_data d;
  memset(&d, 0, sizeof d);
  ma_status st = mak_check_node(ctx, node, OP, 3, 3, 3, 4);
  if (st == MA_OK) st = read_options(ctx, node, &d);
  if (st == MA_OK) st = check_shapes(ctx, node, &d);
  if (st == MA_OK) st = ma_request_scratch(ctx, scratch_layout(&d), &d.scratch);
  if (st != MA_OK) return st;
  detect_data *p = ma_persistent(ctx, sizeof d);
  if (p == NULL) return MA_ERR_ARENA;
  *p = d;
  node->user_data = p;
  return MA_OK;
}

/* ---------------------------------------------------------------- eval */

typedef struct {
  float ymin, xmin, ymax, xmax;
} corner_box;

/* Centre-size encodings to corners, in double as TFLM; fails on an empty or inverted box. */
static ma_status decode_boxes(struct ma_context *ctx, const detect_data *d, const float *enc,
                              const float *anchors, corner_box *boxes) {
  const double sy = d->scale[0], sx = d->scale[1], sh = d->scale[2], sw = d->scale[3];
  for (int32_t i = 0; i < d->num_boxes; i++) {
    const float *e = enc + (size_t)i * d->box_stride, *a = anchors + 4 * (size_t)i;
    const float yc = (float)((double)e[0] / sy * (double)a[2] + (double)a[0]);
    const float xc = (float)((double)e[1] / sx * (double)a[3] + (double)a[1]);
    const float half_h = (float)(0.5 * exp((double)e[2] / sh) * (double)a[2]);
    const float half_w = (float)(0.5 * exp((double)e[3] / sw) * (double)a[3]);
    boxes[i] = (corner_box){yc - half_h, xc - half_w, yc + half_h, xc + half_w};
  }
  for (int32_t i = 0; i < d->num_boxes; i++) {
    if (boxes[i].ymin >= boxes[i].ymax || boxes[i].xmin >= boxes[i].xmax)
      return ma_fail(ctx, MA_ERR_KERNEL, "%s: decoded box %d is empty or inverted (ymin >= ymax "
                     "or xmin >= xmax), which TFLM refuses too", OP, (int)i);
  }
  return MA_OK;
}

/* std::max<float> / std::min<float>, NaN cases included. */
static float max_f(float a, float b) { return a < b ? b : a; }
static float min_f(float a, float b) { return b < a ? b : a; }

static float iou(const corner_box *a, const corner_box *b) {
  const float area_a = (a->ymax - a->ymin) * (a->xmax - a->xmin);
  const float area_b = (b->ymax - b->ymin) * (b->xmax - b->xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float h = max_f(min_f(a->ymax, b->ymax) - max_f(a->ymin, b->ymin), 0.0f);
  const float w = max_f(min_f(a->xmax, b->xmax) - max_f(a->xmin, b->xmin), 0.0f);
  const float inter = h * w;
  return inter / (area_a + area_b - inter);
}

/* Stable sort of idx[0..n) by score, higher first (bottom-up merge, tmp holds n). */
static void sort_by_score(int32_t *idx, int32_t *tmp, int32_t n, const float *score) {
  int32_t *src = idx, *dst = tmp;
  for (int32_t width = 1; width < n; width *= 2) {
    for (int32_t lo = 0; lo < n; lo += 2 * width) {
      const int32_t mid = lo + width < n ? lo + width : n;
      const int32_t hi = mid + width < n ? mid + width : n;
      int32_t l = lo, r = mid, o = lo;
      while (l < mid && r < hi) dst[o++] = score[src[r]] > score[src[l]] ? src[r++] : src[l++];
      while (l < mid) dst[o++] = src[l++];
      while (r < hi) dst[o++] = src[r++];
    }
    int32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx) memcpy(idx, src, sizeof *idx * (size_t)n);
}

typedef struct {
  const detect_data *d;
  const corner_box *boxes;
  float *score; /* one per box: the scores NMS runs on */
  int32_t *keep, *tmp, *selected;
  uint8_t *active;
} nms_work;

/* TFLM's single-class NMS over score[0..boxes): box indices into selected, best first;
 * returns how many (at most limit). */
static int32_t nms(const nms_work *w, const float *score, int32_t limit) {
  const detect_data *d = w->d;
  int32_t kept = 0;
  for (int32_t i = 0; i < d->num_boxes; i++) {
    if (score[i] >= d->score_threshold) w->keep[kept++] = i;
  }
  sort_by_score(w->keep, w->tmp, kept, score);
  const int32_t wanted = kept < limit ? kept : limit;
  memset(w->active, 1, (size_t)kept);
  int32_t n_active = kept, n_selected = 0;
  for (int32_t i = 0; i < kept && n_active > 0 && n_selected < wanted; i++) {
    if (!w->active[i]) continue;
    const corner_box *box = &w->boxes[w->keep[i]];
    w->selected[n_selected++] = w->keep[i];
    w->active[i] = 0;
    n_active--;
    for (int32_t j = i + 1; j < kept; j++) {
      if (w->active[j] && iou(box, &w->boxes[w->keep[j]]) > d->iou_threshold) {
        w->active[j] = 0;
        n_active--;
      }
    }
  }
  return n_selected;
}

typedef struct {
  float *boxes, *classes, *scores;
} detect_out;

static void write_detection(const detect_out *out, int32_t at, const corner_box *box,
                            int32_t cls, float score) {
  memcpy(out->boxes + 4 * (size_t)at, box, sizeof *box);
  out->classes[at] = (float)cls;
  out->scores[at] = score;
}

/* Per class NMS; the best max_detections over all classes, kept in a running top list. */
static int32_t regular_nms(const nms_work *w, const float *pred, candidate *top,
                           const detect_out *out) {
  const detect_data *d = w->d;
  float *score = w->score;
  candidate *next = top + d->max_detections;
  int32_t n_top = 0;
  for (int32_t c = 0; c < d->num_classes; c++) {
    for (int32_t i = 0; i < d->num_boxes; i++)
      score[i] = pred[(size_t)i * d->classes_with_background + c + d->label_offset];
    const int32_t n_sel = nms(w, score, d->detections_per_class);
    /* Both lists are in order (score, then position: the old list first): merge them. */
    const int32_t total = n_top + n_sel < d->max_detections ? n_top + n_sel : d->max_detections;
    int32_t a = 0, b = 0;
    for (int32_t o = 0; o < total; o++) {
      if (b < n_sel && (a >= n_top || score[w->selected[b]] > top[a].score)) {
        next[o] = (candidate){score[w->selected[b]], w->selected[b], c};
        b++;
      } else {
        next[o] = top[a++];
      }
    }
    memcpy(top, next, sizeof *top * (size_t)total);
    n_top = total;
  }
  for (int32_t o = 0; o < n_top; o++)
    write_detection(out, o, &w->boxes[top[o].box], top[o].cls, top[o].score);
  return n_top;
}

/* Whether class a ranks before class b: TFLM's partial-sort comparator (score, then index),
 * which does not order a NaN score. */
static bool ranks_before(const float *s, int32_t a, int32_t b) {
  return s[a] > s[b] || (!(s[a] < s[b]) && a < b);
}

/* The best classes of one box, first k of idx[0..n) in order, as TFLM's std::partial_sort
 * leaves them with the GNU C++ library it is built with: a heap of the first k classes, each
 * later class that ranks before the heap's top replacing it, then a heap sort. Any correct
 * sort agrees on scores that are not NaN; this one agrees on NaN too. */
static void sift_up(const float *s, int32_t *h, int32_t hole, int32_t top, int32_t v) {
  int32_t parent = (hole - 1) / 2;
  while (hole > top && ranks_before(s, h[parent], v)) {
    h[hole] = h[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  h[hole] = v;
}

/* Fills the hole at `hole` of the heap h[0..len) with v: moves the hole down to a leaf along
 * the higher-ranked children, then v up from there. */
static void sift(const float *s, int32_t *h, int32_t hole, int32_t len, int32_t v) {
  const int32_t top = hole;
  int32_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (ranks_before(s, h[child], h[child - 1])) child--;
    h[hole] = h[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    h[hole] = h[child - 1];
    hole = child - 1;
  }
  sift_up(s, h, hole, top, v);
}

/* Moves the heap's top to *out and the value *out held into the heap h[0..len). */
static void pop_to(const float *s, int32_t *h, int32_t len, int32_t *out) {
  const int32_t v = *out;
  *out = h[0];
  sift(s, h, 0, len, v);
}

static void best_classes(const float *s, int32_t n, int32_t k, int32_t *idx) {
  for (int32_t i = 0; i < n; i++) idx[i] = i;
  for (int32_t parent = (k - 2) / 2; k >= 2 && parent >= 0; parent--)
    sift(s, idx, parent, k, idx[parent]);
  for (int32_t i = k; i < n; i++) {
    if (ranks_before(s, idx[i], idx[0])) pop_to(s, idx, k, &idx[i]);
  }
  for (int32_t len = k - 1; len >= 1; len--) pop_to(s, idx, len, &idx[len]);
}

/* NMS over each box's best score; a selected box reports its best k classes. */
static int32_t fast_nms(const nms_work *w, const float *pred, int32_t *classes,
                        const detect_out *out) {
  const detect_data *d = w->d;
  const int32_t k = d->classes_per_detection < d->num_classes ? d->classes_per_detection
                                                               : d->num_classes;
  for (int32_t i = 0; i < d->num_boxes; i++) {
    const float *s = pred + (size_t)i * d->classes_with_background + d->label_offset;
    best_classes(s, d->num_classes, k, classes);
    w->score[i] = s[classes[0]];
  }
  const int32_t n_sel = nms(w, w->score, d->max_detections);
  int32_t written = 0;
  for (int32_t i = 0; i < n_sel; i++) {
    const int32_t box = w->selected[i];
    const float *s = pred + (size_t)box * d->classes_with_background + d->label_offset;
    best_classes(s, d->num_classes, k, classes); /* again: only one box's are kept */
    for (int32_t col = 0; col < k; col++) {
      /* TFLM's output index: k per detection written so far, plus the column. */
      write_detection(out, k * written + col, &w->boxes[box], classes[col], s[classes[col]]);
      written++;
    }
  }
  return written;
}

static ma_status detect_eval(struct ma_context *ctx, ma_node *node) {
  const detect_data *d = node->user_data;
  uint8_t *s = ma_scratch(ctx, d->scratch);
  if (s == NULL) return ma_fail(ctx, MA_ERR_KERNEL, "%s: scratch buffer missing", OP);
  corner_box *boxes = (corner_box *)(void *)(s + d->boxes);
  const nms_work w = {d, boxes, (float *)(void *)(s + d->scores), (int32_t *)(void *)(s + d->keep),
                      (int32_t *)(void *)(s + d->tmp), (int32_t *)(void *)(s + d->selected),
                      s + d->active};
  ma_status st = decode_boxes(ctx, d, node->inputs[0]->data, node->inputs[2]->data, boxes);
  if (st != MA_OK) return st;
  /* TFLM leaves what it does not write as it was; here it is zero. */
  for (int32_t i = 0; i < 4; i++) {
    if (node->outputs[i]->bytes > 0) memset(node->outputs[i]->data, 0, node->outputs[i]->bytes);
  }
  const detect_out out = {node->outputs[0]->data, node->outputs[1]->data, node->outputs[2]->data};
  const float *pred = node->inputs[1]->data;
  const int32_t n = d->regular ? regular_nms(&w, pred, (candidate *)(void *)(s + d->lists), &out)
                               : fast_nms(&w, pred, (int32_t *)(void *)(s + d->lists), &out);
  *(float *)node->outputs[3]->data = (float)n;
  return MA_OK;
}

const ma_kernel mak_detection_postprocess = {detect_prepare, detect_eval, 0};
