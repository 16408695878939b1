#pragma once

// Value types for fallible operations, used by every layer of hubwatch.
//
// Error says what went wrong in one line a human can act on ("config.json: num_hidden_layers
// must be a positive integer, got -3"). Result<T> holds either a T or an Error; Result<T, E>
// holds a T or a richer error value of the caller's (the hub client's HubError, which keeps
// the HTTP status and the Hub's error code). Status is success or an Error. All are plain
// values: cheap to move, safe to read from many threads at once, never thrown.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hubwatch {

enum class ErrorCode {
  kInvalidInput,  // the input is malformed or out of range
  kUnsupported,   // well-formed, but not something we model (unknown architecture, ...)
  kOverflow,      // sizes too large to represent exactly
  kIo,            // a file or stream could not be read or written
};

struct Error {
  ErrorCode code = ErrorCode::kInvalidInput;
  std::string message;

  static Error InvalidInput(std::string message) {
    return {ErrorCode::kInvalidInput, std::move(message)};
  }
  static Error Unsupported(std::string message) {
    return {ErrorCode::kUnsupported, std::move(message)};
  }
  static Error Overflow(std::string message) { return {ErrorCode::kOverflow, std::move(message)}; }
  static Error Io(std::string message) { return {ErrorCode::kIo, std::move(message)}; }
};

template <class T, class E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }

  // REQUIRES: ok()
  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // REQUIRES: !ok()
  const E& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }

  bool ok() const { return ok_; }
  // REQUIRES: !ok()
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace hubwatch
