/* perf/perf_ort.c: ONNX Runtime as a peer, through its C API, loaded with
 * dlopen so that nothing of ORT is needed to build.
 *
 * ORT's C API is one exported function, OrtGetApiBase(), returning a struct
 * of two function pointers; GetApi(version) returns the OrtApi, a struct of
 * function pointers that only ever grows at the end (so the table of any
 * version is a prefix of later ones). The entries used here and their
 * positions, counted in the order of onnxruntime_c_api.h (the same in every
 * release since API version 1, except AddSessionConfigEntry, added later in
 * the same place), are below; everything is called with the signatures that
 * header declares. We ask for API version PERF_ORT_API_VERSION, which every
 * ORT since 1.7 provides.
 *
 * Settings (perf/README.md): CPU execution provider, intra-op threads = the
 * thread count under test, inter-op threads 1, ORT_SEQUENTIAL,
 * ORT_ENABLE_ALL, default arena and spinning. Inputs are OrtValues over the
 * harness's buffers (no copy); outputs are pre-allocated OrtValues over the
 * harness's buffers, passed to Run (which then writes them in place), so no
 * call allocates an output. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf/perf.h"

#define PERF_ORT_API_VERSION 7u

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtAllocator OrtAllocator;
typedef struct OrtRunOptions OrtRunOptions;

typedef struct {
  const void *(*GetApi)(uint32_t version);
  const char *(*GetVersionString)(void);
} OrtApiBase;

enum { ORT_LOGGING_LEVEL_ERROR = 3 };
enum { ORT_SEQUENTIAL = 0 };
enum { ORT_ENABLE_ALL = 99 };
enum { OrtArenaAllocator = 1, OrtDeviceAllocator = 0 };
enum { OrtMemTypeDefault = 0 };
enum { ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1 };

/* Positions in struct OrtApi. */
enum {
  ORT_GetErrorMessage = 2,
  ORT_CreateEnv = 3,
  ORT_CreateSession = 7,
  ORT_Run = 9,
  ORT_CreateSessionOptions = 10,
  ORT_SetSessionExecutionMode = 13,
  ORT_EnableProfiling = 14,
  ORT_SetSessionGraphOptimizationLevel = 23,
  ORT_SetIntraOpNumThreads = 24,
  ORT_SetInterOpNumThreads = 25,
  ORT_SessionGetInputCount = 30,
  ORT_SessionGetOutputCount = 31,
  ORT_SessionGetInputName = 36,
  ORT_SessionGetOutputName = 37,
  ORT_CreateTensorWithDataAsOrtValue = 49,
  ORT_CreateCpuMemoryInfo = 69,
  ORT_AllocatorFree = 76,
  ORT_GetAllocatorWithDefaultOptions = 78,
  ORT_ReleaseEnv = 92,
  ORT_ReleaseStatus = 93,
  ORT_ReleaseMemoryInfo = 94,
  ORT_ReleaseSession = 95,
  ORT_ReleaseValue = 96,
  ORT_ReleaseSessionOptions = 100,
  ORT_AddSessionConfigEntry = 130,
};

typedef const char *(*fn_GetErrorMessage)(const OrtStatus *);
typedef OrtStatus *(*fn_CreateEnv)(int level, const char *logid, OrtEnv **out);
typedef OrtStatus *(*fn_CreateSession)(const OrtEnv *, const char *path, const OrtSessionOptions *,
                                       OrtSession **out);
typedef OrtStatus *(*fn_Run)(OrtSession *, const OrtRunOptions *, const char *const *in_names,
                             const OrtValue *const *ins, size_t n_in,
                             const char *const *out_names, size_t n_out, OrtValue **outs);
typedef OrtStatus *(*fn_CreateSessionOptions)(OrtSessionOptions **out);
typedef OrtStatus *(*fn_SetInt)(OrtSessionOptions *, int);
typedef OrtStatus *(*fn_SetStr)(OrtSessionOptions *, const char *);
typedef OrtStatus *(*fn_SessionGetCount)(const OrtSession *, size_t *out);
typedef OrtStatus *(*fn_SessionGetName)(const OrtSession *, size_t i, OrtAllocator *, char **out);
typedef OrtStatus *(*fn_CreateTensorWithData)(const OrtMemoryInfo *, void *data, size_t bytes,
                                              const int64_t *shape, size_t rank, int type,
                                              OrtValue **out);
typedef OrtStatus *(*fn_CreateCpuMemoryInfo)(int type, int mem_type, OrtMemoryInfo **out);
typedef OrtStatus *(*fn_AllocatorFree)(OrtAllocator *, void *p);
typedef OrtStatus *(*fn_GetAllocator)(OrtAllocator **out);
typedef void (*fn_Release)(void *);
typedef OrtStatus *(*fn_AddConfig)(OrtSessionOptions *, const char *key, const char *value);

struct perf_ort {
  void *lib;
  const OrtApiBase *base;
  void *const *api;
  OrtEnv *env;
  OrtMemoryInfo *cpu;
  char version[32];
  char path[512];
};

struct perf_ort_run {
  perf_ort *o;
  OrtSession *session;
  int n_in, n_out;
  char *in_names[PERF_MAX_IO], *out_names[PERF_MAX_IO];
  OrtValue *ins[PERF_MAX_IO], *outs[PERF_MAX_IO];
  /* for perf_ort_call_into: shapes to wrap other output buffers */
  size_t out_bytes[PERF_MAX_IO];
  int64_t out_dims[PERF_MAX_IO][8];
  uint32_t out_rank[PERF_MAX_IO];
};

/* Returns 0 for a NULL status, else copies the message, releases it, -1. */
static int status_ok(perf_ort *o, OrtStatus *st, const char *what, char *err, size_t n) {
  if (!st) return 0;
  const char *msg = ((fn_GetErrorMessage)o->api[ORT_GetErrorMessage])(st);
  if (err) snprintf(err, n, "ORT %s: %s", what, msg ? msg : "?");
  ((fn_Release)o->api[ORT_ReleaseStatus])(st);
  return -1;
}

static int is_file(const char *p) {
  struct stat s;
  return stat(p, &s) == 0 && S_ISREG(s.st_mode);
}

static void *try_open(const char *path, char *why, size_t n) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h && why) snprintf(why, n, "%s", dlerror());
  return h;
}

perf_ort *perf_ort_load(const char *path, char *why, size_t why_size) {
  static const char *const sub[] = {
      "libonnxruntime.so.1",
      "node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1",
      "onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1",
      "bin/napi-v6/linux/x64/libonnxruntime.so.1",
      "lib/libonnxruntime.so.1", NULL};
  char cand[512] = "";
  void *h = NULL;
  if (path && *path) {
    if (is_file(path)) {
      snprintf(cand, sizeof cand, "%s", path);
    } else {
      for (int i = 0; sub[i] && !cand[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", path, sub[i]);
        if (is_file(p)) snprintf(cand, sizeof cand, "%s", p);
      }
    }
    if (!cand[0]) {
      snprintf(why, why_size, "no libonnxruntime.so.1 at %s", path);
      return NULL;
    }
    h = try_open(cand, why, why_size);
  } else {
    snprintf(cand, sizeof cand, "libonnxruntime.so.1");
    h = try_open(cand, NULL, 0);
    if (!h) {
      snprintf(why, why_size,
               "libonnxruntime.so.1 not found (give --ort PATH or ACCY_PERF_ORT=PATH: the "
               "library, or a directory with an npm install of onnxruntime-node)");
      return NULL;
    }
  }
  if (!h) return NULL;
  const OrtApiBase *(*get_base)(void) = (const OrtApiBase *(*)(void))dlsym(h, "OrtGetApiBase");
  if (!get_base) {
    snprintf(why, why_size, "%s has no OrtGetApiBase", cand);
    dlclose(h);
    return NULL;
  }
  perf_ort *o = calloc(1, sizeof *o);
  o->lib = h;
  o->base = get_base();
  o->api = (void *const *)o->base->GetApi(PERF_ORT_API_VERSION);
  if (!o->api) {
    snprintf(why, why_size, "%s does not provide ORT C API version %u", cand,
             PERF_ORT_API_VERSION);
    dlclose(h);
    free(o);
    return NULL;
  }
  snprintf(o->version, sizeof o->version, "%s", o->base->GetVersionString());
  if (dlinfo(h, RTLD_DI_ORIGIN, o->path) != 0) snprintf(o->path, sizeof o->path, "?");
  size_t len = strlen(o->path);
  const char *base = strrchr(cand, '/');
  snprintf(o->path + len, sizeof o->path - len, "/%s", base ? base + 1 : cand);
  if (status_ok(o, ((fn_CreateEnv)o->api[ORT_CreateEnv])(ORT_LOGGING_LEVEL_ERROR, "accy-perf",
                                                        &o->env),
                "CreateEnv", why, why_size) ||
      status_ok(o, ((fn_CreateCpuMemoryInfo)o->api[ORT_CreateCpuMemoryInfo])(
                       OrtDeviceAllocator, OrtMemTypeDefault, &o->cpu),
                "CreateCpuMemoryInfo", why, why_size)) {
    free(o);
    return NULL;
  }
  return o;
}

const char *perf_ort_version(const perf_ort *o) { return o->version; }
const char *perf_ort_library(const perf_ort *o) { return o->path; }

static OrtValue *wrap(perf_ort *o, void *data, size_t bytes, const int64_t *dims, uint32_t rank,
                      char *err, size_t n) {
  OrtValue *v = NULL;
  /* ORT refuses a NULL shape pointer even for rank 0. */
  static const int64_t scalar_dims[1] = {1};
  if (status_ok(o, ((fn_CreateTensorWithData)o->api[ORT_CreateTensorWithDataAsOrtValue])(
                       o->cpu, data, bytes, rank ? dims : scalar_dims, rank,
                       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &v),
                "CreateTensorWithDataAsOrtValue", err, n))
    return NULL;
  return v;
}

perf_ort_run *perf_ort_open(perf_ort *o, const char *onnx_path, int threads, int spin, int n_in,
                            void *const *ins, const size_t *in_bytes,
                            const int64_t *const *in_dims, const uint32_t *in_rank, int n_out,
                            void *const *outs, const size_t *out_bytes,
                            const int64_t *const *out_dims, const uint32_t *out_rank, char *err,
                            size_t err_size) {
  perf_ort_run *r = calloc(1, sizeof *r);
  r->o = o;
  OrtSessionOptions *so = NULL;
  OrtAllocator *alloc = NULL;
  size_t count;
  if (status_ok(o, ((fn_CreateSessionOptions)o->api[ORT_CreateSessionOptions])(&so),
                "CreateSessionOptions", err, err_size) ||
      status_ok(o, ((fn_SetInt)o->api[ORT_SetIntraOpNumThreads])(so, threads),
                "SetIntraOpNumThreads", err, err_size) ||
      status_ok(o, ((fn_SetInt)o->api[ORT_SetInterOpNumThreads])(so, 1), "SetInterOpNumThreads",
                err, err_size) ||
      status_ok(o, ((fn_SetInt)o->api[ORT_SetSessionExecutionMode])(so, ORT_SEQUENTIAL),
                "SetSessionExecutionMode", err, err_size) ||
      status_ok(o,
                ((fn_SetInt)o->api[ORT_SetSessionGraphOptimizationLevel])(so, ORT_ENABLE_ALL),
                "SetSessionGraphOptimizationLevel", err, err_size))
    goto fail;
  /* ORT's own per-node profile, for finding where the two runtimes differ
   * (perf/README.md, "Per-node profiles"): a JSON file per session, named
   * from this prefix. Not used for any number the harness prints. */
  const char *profile = getenv("ACCY_PERF_ORT_PROFILE");
  if (profile && *profile &&
      status_ok(o, ((fn_SetStr)o->api[ORT_EnableProfiling])(so, profile), "EnableProfiling", err,
                err_size))
    goto fail;
  if (spin >= 0 &&
      status_ok(o, ((fn_AddConfig)o->api[ORT_AddSessionConfigEntry])(
                       so, "session.intra_op.allow_spinning", spin ? "1" : "0"),
                "AddSessionConfigEntry", err, err_size))
    goto fail;
  if (status_ok(o, ((fn_CreateSession)o->api[ORT_CreateSession])(o->env, onnx_path, so,
                                                                  &r->session),
                "CreateSession", err, err_size))
    goto fail;
  ((fn_Release)o->api[ORT_ReleaseSessionOptions])(so);
  so = NULL;
  if (status_ok(o, ((fn_GetAllocator)o->api[ORT_GetAllocatorWithDefaultOptions])(&alloc),
                "GetAllocatorWithDefaultOptions", err, err_size))
    goto fail;
  if (status_ok(o, ((fn_SessionGetCount)o->api[ORT_SessionGetInputCount])(r->session, &count),
                "SessionGetInputCount", err, err_size))
    goto fail;
  if ((int)count != n_in) {
    snprintf(err, err_size, "ORT session has %zu inputs, accy's program %d", count, n_in);
    goto fail;
  }
  if (status_ok(o, ((fn_SessionGetCount)o->api[ORT_SessionGetOutputCount])(r->session, &count),
                "SessionGetOutputCount", err, err_size))
    goto fail;
  if ((int)count != n_out) {
    snprintf(err, err_size, "ORT session has %zu outputs, accy's program %d", count, n_out);
    goto fail;
  }
  r->n_in = n_in;
  r->n_out = n_out;
  for (int i = 0; i < n_in; i++) {
    char *name = NULL;
    if (status_ok(o, ((fn_SessionGetName)o->api[ORT_SessionGetInputName])(r->session, (size_t)i,
                                                                          alloc, &name),
                  "SessionGetInputName", err, err_size))
      goto fail;
    r->in_names[i] = strdup(name);
    (void)status_ok(o, ((fn_AllocatorFree)o->api[ORT_AllocatorFree])(alloc, name), "free", NULL,
                    0);
    if (!(r->ins[i] = wrap(o, ins[i], in_bytes[i], in_dims[i], in_rank[i], err, err_size)))
      goto fail;
  }
  for (int i = 0; i < n_out; i++) {
    char *name = NULL;
    if (status_ok(o, ((fn_SessionGetName)o->api[ORT_SessionGetOutputName])(r->session, (size_t)i,
                                                                           alloc, &name),
                  "SessionGetOutputName", err, err_size))
      goto fail;
    r->out_names[i] = strdup(name);
    (void)status_ok(o, ((fn_AllocatorFree)o->api[ORT_AllocatorFree])(alloc, name), "free", NULL,
                    0);
    r->out_bytes[i] = out_bytes[i];
    r->out_rank[i] = out_rank[i] > 8 ? 8 : out_rank[i];
    memcpy(r->out_dims[i], out_dims[i], r->out_rank[i] * sizeof(int64_t));
    if (!(r->outs[i] = wrap(o, outs[i], out_bytes[i], out_dims[i], out_rank[i], err, err_size)))
      goto fail;
  }
  return r;
fail:
  if (so) ((fn_Release)o->api[ORT_ReleaseSessionOptions])(so);
  perf_ort_close(r);
  return NULL;
}

static int run_with(perf_ort_run *r, OrtValue **outs, char *err, size_t n) {
  perf_ort *o = r->o;
  return status_ok(o, ((fn_Run)o->api[ORT_Run])(r->session, NULL,
                                                (const char *const *)r->in_names,
                                                (const OrtValue *const *)r->ins, (size_t)r->n_in,
                                                (const char *const *)r->out_names,
                                                (size_t)r->n_out, outs),
                   "Run", err, n);
}

int perf_ort_call(perf_ort_run *r, char *err, size_t err_size) {
  OrtValue *outs[PERF_MAX_IO];
  memcpy(outs, r->outs, sizeof outs); /* Run may not replace a pre-allocated value */
  int rc = run_with(r, outs, err, err_size);
  if (rc == 0) {
    for (int i = 0; i < r->n_out; i++) {
      if (outs[i] != r->outs[i]) { /* would mean ORT allocated: not what we measure */
        snprintf(err, err_size, "ORT Run replaced pre-allocated output %d", i);
        ((fn_Release)r->o->api[ORT_ReleaseValue])(outs[i]);
        return -1;
      }
    }
  }
  return rc;
}

int perf_ort_wrap_outputs(perf_ort_run *r, void *const *bufs, void **values, char *err,
                          size_t err_size) {
  memset(values, 0, sizeof(void *) * PERF_MAX_IO);
  for (int i = 0; i < r->n_out; i++) {
    if (!(values[i] = wrap(r->o, bufs[i], r->out_bytes[i], r->out_dims[i], r->out_rank[i], err,
                           err_size))) {
      perf_ort_free_values(r, values);
      return -1;
    }
  }
  return 0;
}

int perf_ort_call_values(perf_ort_run *r, void *const *values, char *err, size_t err_size) {
  OrtValue *outs[PERF_MAX_IO];
  memcpy(outs, values, sizeof outs);
  return run_with(r, outs, err, err_size);
}

void perf_ort_free_values(perf_ort_run *r, void **values) {
  for (int i = 0; i < PERF_MAX_IO; i++) {
    if (values[i]) ((fn_Release)r->o->api[ORT_ReleaseValue])(values[i]);
    values[i] = NULL;
  }
}

void perf_ort_close(perf_ort_run *r) {
  if (!r) return;
  fn_Release rel = (fn_Release)r->o->api[ORT_ReleaseValue];
  for (int i = 0; i < PERF_MAX_IO; i++) {
    if (r->ins[i]) rel(r->ins[i]);
    if (r->outs[i]) rel(r->outs[i]);
    free(r->in_names[i]);
    free(r->out_names[i]);
  }
  if (r->session) ((fn_Release)r->o->api[ORT_ReleaseSession])(r->session);
  free(r);
}
