/* Compiled as strict C99 (see CMakeLists.txt): proves include/kolo/c_api.h
 * is a C header, and runs a size-1 job through it. c_api_test.cc calls it. */
#include <stdio.h>
#include <string.h>

#include "kolo/c_api.h"

int kolo_c_smoke(char* message, size_t capacity);

int kolo_c_smoke(char* message, size_t capacity) {
  float grad[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  int64_t shape[1] = {4};
  kolo_tensor t = {"c.grad", grad, grad, KOLO_FLOAT32, 1, shape, KOLO_CPU_DEVICE};
  kolo_handle h;
  int status;
  message[0] = '\0';
  if (kolo_is_initialized() != 0 || kolo_rank() != -1) {
    snprintf(message, capacity, "initialized before kolo_init");
    return 1;
  }
  status = kolo_init();
  if (status != KOLO_OK) {
    snprintf(message, capacity, "kolo_init: %d %s", status, kolo_last_error());
    return 1;
  }
  if (kolo_size() != 1 || kolo_rank() != 0) {
    snprintf(message, capacity, "size %d rank %d", kolo_size(), kolo_rank());
    kolo_shutdown();
    return 1;
  }
  h = kolo_allreduce(&t, KOLO_SUM, 2.0, 0.5, 0);
  if (h <= 0) {
    snprintf(message, capacity, "kolo_allreduce: %lld %s", (long long)h, kolo_last_error());
    kolo_shutdown();
    return 1;
  }
  status = kolo_wait(h, 30.0);
  if (status != KOLO_OK || strcmp(kolo_handle_error(h), "") != 0 || grad[3] != 4.0f) {
    snprintf(message, capacity, "kolo_wait: %d '%s' grad[3]=%f", status, kolo_handle_error(h),
             (double)grad[3]);
    kolo_shutdown();
    return 1;
  }
  if (kolo_release(h) != KOLO_OK || kolo_release(h) != KOLO_INVALID_ARGUMENT) {
    snprintf(message, capacity, "kolo_release twice: %s", kolo_last_error());
    kolo_shutdown();
    return 1;
  }
  status = kolo_shutdown();
  if (status != KOLO_OK || kolo_is_initialized() != 0) {
    snprintf(message, capacity, "kolo_shutdown: %d %s", status, kolo_last_error());
    return 1;
  }
  return 0;
}
