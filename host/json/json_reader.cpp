#include "json/json_reader.hpp"

#include "io/safe_read.hpp"

#include <fstream>
#include <sstream>

namespace htp {

const char *json_type_name(const nlohmann::json &v) {
  switch (v.type()) {
  case nlohmann::json::value_t::null: return "null";
  case nlohmann::json::value_t::object: return "an object";
  case nlohmann::json::value_t::array: return "an array";
  case nlohmann::json::value_t::string: return "a string";
  case nlohmann::json::value_t::boolean: return "a boolean";
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned: return "an integer";
  case nlohmann::json::value_t::number_float: return "a number";
  case nlohmann::json::value_t::binary: return "binary data";
  case nlohmann::json::value_t::discarded: return "a discarded value";
  }
  return "a value";
}

void JsonReader::fail(const std::string &reason) const { throw JsonSchemaError(path_, reason); }

const JsonReader &JsonReader::object() const {
  if (!v_->is_object()) fail(std::string("expected an object, got ") + json_type_name(*v_));
  return *this;
}

JsonReader JsonReader::at(std::string_view key) const {
  object();
  auto it = v_->find(key);
  if (it == v_->end()) fail("missing required field '" + std::string(key) + "'");
  return JsonReader(*it, path_ + "." + std::string(key));
}

std::optional<JsonReader> JsonReader::maybe(std::string_view key) const {
  object();
  auto it = v_->find(key);
  if (it == v_->end() || it->is_null()) return std::nullopt;
  return JsonReader(*it, path_ + "." + std::string(key));
}

JsonReader JsonReader::at(size_t i) const {
  if (!v_->is_array()) fail(std::string("expected an array, got ") + json_type_name(*v_));
  if (i >= v_->size()) fail("index " + std::to_string(i) + " out of range");
  return JsonReader((*v_)[i], path_ + "[" + std::to_string(i) + "]");
}

std::vector<JsonReader> JsonReader::items() const {
  if (!v_->is_array()) fail(std::string("expected an array, got ") + json_type_name(*v_));
  std::vector<JsonReader> out;
  out.reserve(v_->size());
  for (size_t i = 0; i < v_->size(); ++i) out.emplace_back((*v_)[i], path_ + "[" + std::to_string(i) + "]");
  return out;
}

std::string JsonReader::str() const {
  if (!v_->is_string()) fail(std::string("expected a string, got ") + json_type_name(*v_));
  return v_->get<std::string>();
}

int64_t JsonReader::integer() const {
  if (v_->is_number_integer()) return v_->get<int64_t>();
  if (v_->is_number_unsigned() && v_->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(v_->get<uint64_t>());
  fail(std::string("expected an integer, got ") + json_type_name(*v_));
}

bool JsonReader::boolean() const {
  if (!v_->is_boolean()) fail(std::string("expected a boolean, got ") + json_type_name(*v_));
  return v_->get<bool>();
}

std::vector<std::string> JsonReader::strings() const {
  std::vector<std::string> out;
  for (const auto &item : items()) out.push_back(item.str());
  return out;
}

Expected<nlohmann::json> parse_json_text(std::string_view text, const std::string &file) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions only to learn where it broke (cheap: this is the error path).
    try {
      nlohmann::json unused = nlohmann::json::parse(text);
    (void)unused;
    } catch (const nlohmann::json::parse_error &e) {
      return Diagnostic::error("json.syntax", "'" + file + "' is not valid JSON: byte " +
                                                  std::to_string(e.byte) + ": " + e.what());
    } catch (const nlohmann::json::exception &e) {  // e.g. a number out of range
      return Diagnostic::error("json.syntax", "'" + file + "' is not valid JSON: " + e.what());
    }
    return Diagnostic::error("json.syntax", "'" + file + "' is not valid JSON");
  }
  return j;
}

Expected<nlohmann::json> read_json_file(const std::string &file) {
  auto text = read_regular_file(file, kMaxDocumentBytes);
  if (!text) return text.error();
  return parse_json_text(*text, file);
}

}  // namespace htp
