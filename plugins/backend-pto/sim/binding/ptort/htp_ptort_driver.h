/* The C interface between HTP's PTO bindings and the pto-runtime driver (htp_ptort_driver.cpp).
 *
 * The driver is compiled at run time against a user's pto-runtime checkout (PTO_RUNTIME_ROOT), together
 * with that checkout's own host worker sources, into one shared object that the binding dlopens. This
 * header holds only plain C types so the binding (built with HTP) and the driver (built against the
 * runtime) agree on it without sharing any C++ type. Bump HTP_PTORT_ABI on any change. */
#ifndef HTP_PTORT_DRIVER_H
#define HTP_PTORT_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HTP_PTORT_ABI 1
#define HTP_PTORT_MAX_DIMS 5

/* Argument directions, as the package's signatures spell them. */
enum { HTP_PTORT_IN = 0, HTP_PTORT_OUT = 1, HTP_PTORT_INOUT = 2 };

/* One entry tensor: a contiguous host buffer. The runtime stages it to device memory and copies it
 * back after the run unless it is an input. */
typedef struct HtpPtortTensor {
  void *data;
  int64_t shape[HTP_PTORT_MAX_DIMS];
  int32_t ndim;
  uint8_t dl_code; /* DLPack DLDataTypeCode */
  uint8_t dl_bits;
  int32_t direction;
} HtpPtortTensor;

/* One kernel of the package: its func_id, the built binary and its tensor signature. */
typedef struct HtpPtortKernel {
  int32_t func_id;
  const char *binary_path;
  const int32_t *signature;
  int32_t signature_count;
} HtpPtortKernel;

typedef struct HtpPtortRequest {
  uint32_t abi; /* HTP_PTORT_ABI */
  /* The runtime's built platform libraries (empty string: not used on this platform). */
  const char *host_library;
  const char *aicpu_library;
  const char *aicore_library;
  const char *dispatcher_library;
  const char *sim_context_library;
  int32_t device_id;
  int32_t aicpu_thread_num; /* 0: the platform default */
  int32_t log_level;        /* the runtime's host log threshold (10 debug ... 40 error, 60 off) */
  /* Device kernels are ELF objects whose .text section is the launchable code. */
  int32_t kernels_are_elf_objects;
  const char *orchestration_path;
  const char *function_name;
  const char *config_name;
  const HtpPtortKernel *kernels;
  int32_t kernel_count;
  const HtpPtortTensor *tensors;
  int32_t tensor_count;
  const uint64_t *scalars;
  int32_t scalar_count;
} HtpPtortRequest;

typedef struct HtpPtortResult {
  double init_seconds;     /* loading the runtime and bringing the device up */
  double register_seconds; /* staging the orchestration and kernels */
  double run_seconds;      /* the run, staging of the tensors included */
  char error[4096];        /* set when htp_ptort_run returns nonzero */
} HtpPtortResult;

/* Runs the package once; returns 0 on success. */
int htp_ptort_run(const HtpPtortRequest *request, HtpPtortResult *result);
typedef int (*HtpPtortRunFn)(const HtpPtortRequest *, HtpPtortResult *);

#ifdef __cplusplus
}
#endif

#endif /* HTP_PTORT_DRIVER_H */
