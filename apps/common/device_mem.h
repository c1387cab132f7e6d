/*
 * Device buffers for the benchmarks (-d cuda), allocated through libcuda loaded with dlopen, so
 * the apps build and run without the CUDA toolkit or a GPU. Plain C.
 *
 * device_mem_open() loads the driver and makes device 0's primary context current; it returns
 * NULL when device buffers can be used, else a one-line reason (no libcuda, no device, ...).
 */
#ifndef RRT_APPS_COMMON_DEVICE_MEM_H
#define RRT_APPS_COMMON_DEVICE_MEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *device_mem_open(void);
void *device_mem_alloc(size_t bytes);            /* NULL on failure */
void device_mem_free(void *p);
int device_mem_fill(void *p, int byte, size_t n); /* 0 on success */
int device_mem_to_host(void *dst, const void *src, size_t n);
int device_mem_from_host(void *dst, const void *src, size_t n);

/* A benchmark buffer of bytes on the device or (page-aligned) on the host; NULL on failure. */
void *device_mem_or_host_alloc(int on_device, size_t bytes);
void device_mem_or_host_free(int on_device, void *p);

/* The exit status of a benchmark or test that skips (automake's SKIP). */
#define DEVICE_SKIP_EXIT 77

#ifdef __cplusplus
}
#endif

#endif /* RRT_APPS_COMMON_DEVICE_MEM_H */
