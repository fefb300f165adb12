// common/safety.hpp: the one guard for bad input. Every check a decoder makes on
// a stream field, length or offset goes through SAFETY_CHECK, so that a reader
// can find them all and every failure carries a code and a message that says
// what is wrong and where.
#pragma once

#include <sstream>
#include <string>

#include "vlec/error.hpp"

namespace vlec::detail {

[[noreturn]] void throw_error(ErrorCode code, const std::string& message);

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}

}  // namespace vlec::detail

// SAFETY_CHECK(cond, code, message parts...): if cond is false, throw vlec::Error.
// The message parts are only formatted on failure, so the check costs one branch.
#define SAFETY_CHECK(cond, code, ...)                                          \
  do {                                                                         \
    if (__builtin_expect(!(cond), 0))                                          \
      ::vlec::detail::throw_error((code), ::vlec::detail::concat(__VA_ARGS__)); \
  } while (0)

// Argument checks on the caller's side (options, sizes) use the same path.
#define VLEC_REQUIRE(cond, ...) \
  SAFETY_CHECK(cond, ::vlec::ErrorCode::invalid_argument, __VA_ARGS__)
