// Typed, path-tracking reads of JSON documents: every schema error names its JSON path ($.a[2].b).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

/// Thrown by JsonReader on a schema violation; `what()` is "<path>: <reason>".
class JsonSchemaError : public std::runtime_error {
public:
  JsonSchemaError(const std::string &path, const std::string &reason)
      : std::runtime_error(path + ": " + reason), path_(path) {}
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// A view of one JSON value and its path; accessors throw JsonSchemaError naming the path.
class JsonReader {
public:
  JsonReader(const nlohmann::json &value, std::string path = "$") : v_(&value), path_(std::move(path)) {}

  const nlohmann::json &value() const { return *v_; }
  const std::string &path() const { return path_; }

  /// The required member `key` of an object.
  JsonReader at(std::string_view key) const;
  /// The member `key` when present (and not null).
  std::optional<JsonReader> maybe(std::string_view key) const;
  /// Element i of an array.
  JsonReader at(size_t i) const;
  /// Elements of an array.
  std::vector<JsonReader> items() const;
  /// Requires an object; returns *this.
  const JsonReader &object() const;

  std::string str() const;
  int64_t integer() const;
  bool boolean() const;
  std::vector<std::string> strings() const;

  /// Throws a schema error at this path.
  [[noreturn]] void fail(const std::string &reason) const;

private:
  const nlohmann::json *v_;
  std::string path_;
};

/// Parses `text` as JSON; an error naming `file` and the byte offset when it is malformed.
Expected<nlohmann::json> parse_json_text(std::string_view text, const std::string &file);

/// Reads and parses a JSON file; an error naming the file when it is unreadable or malformed.
Expected<nlohmann::json> read_json_file(const std::string &file);

/// "object", "array", "string", ... for messages.
const char *json_type_name(const nlohmann::json &v);

}  // namespace htp
