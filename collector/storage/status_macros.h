// RETURN_IF_ERROR for the storage backends' multi-step writes (absl has no public one).
#pragma once

#include "absl/status/status.h"

#ifndef RETURN_IF_ERROR
#define RETURN_IF_ERROR(expr)                   \
  do {                                          \
    if (absl::Status _st = (expr); !_st.ok()) { \
      return _st;                               \
    }                                           \
  } while (0)
#endif
