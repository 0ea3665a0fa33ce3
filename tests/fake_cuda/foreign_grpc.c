/* Stands in for an application that brought its own gRPC into the global symbol scope (e.g. a
 * framework loaded RTLD_GLOBAL). gpuspy must notice and keep its own gRPC out of the process. */
__attribute__((visibility("default"))) void grpc_init(void) {}
