// JSON from users, with file-named errors, a depth limit, no duplicate keys and nothing after the
// document (see json_text.h).
#include "sim/support/json_text.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "sim/support/error.h"

namespace zb {

namespace {

// Builds the document from nlohmann's SAX events, in time linear in the text (the library's
// callback parser, the other way to see the depth, re-walks what it has built and is quadratic in
// long arrays of objects). Refuses nesting deeper than kMaxJsonDepth and a key repeated in one
// object, which the library's own builder would let overwrite the first value.
template <typename Json>
class DocumentBuilder : public nlohmann::json_sax<Json> {
 public:
  DocumentBuilder(Json& root, std::string_view source) : root_(root), source_(source) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool value) override { return add(value); }
  bool number_integer(typename Json::number_integer_t value) override { return add(value); }
  bool number_unsigned(typename Json::number_unsigned_t value) override { return add(value); }
  bool number_float(typename Json::number_float_t value, const typename Json::string_t&) override {
    return add(value);
  }
  bool string(typename Json::string_t& value) override { return add(std::move(value)); }
  bool binary(typename Json::binary_t& value) override { return add(std::move(value)); }

  bool start_object(std::size_t) override { return open(Json::value_t::object); }
  bool key(typename Json::string_t& name) override {
    if (open_.back()->contains(name)) {
      throw InputError(fmt::format("{}: malformed JSON: the key \"{}\" appears twice in one object", source_,
                                   name.size() <= 80 ? name : name.substr(0, 80) + "..."));
    }
    key_ = std::move(name);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Json::value_t::array); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    throw InputError(fmt::format("{}: malformed JSON: {}", source_, error.what()));
  }

 private:
  // Places a value in the open array or object (under the last key), or as the document; returns
  // where it now lives.
  template <typename Value>
  Json* place(Value&& value) {
    if (open_.empty()) {
      root_ = Json(std::forward<Value>(value));
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(Json(std::forward<Value>(value)));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = Json(std::forward<Value>(value));
    return &slot;
  }
  template <typename Value>
  bool add(Value&& value) {
    place(std::forward<Value>(value));
    return true;
  }
  bool open(typename Json::value_t type) {
    if (static_cast<int>(open_.size()) >= kMaxJsonDepth) {
      throw InputError(fmt::format("{}: malformed JSON: nested deeper than {} levels", source_, kMaxJsonDepth));
    }
    open_.push_back(place(type));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  std::string_view source_;
  std::vector<Json*> open_;  // the arrays and objects being read, outermost first
  typename Json::string_t key_;
};

template <typename Json>
Json parse(std::string_view text, std::string_view source) {
  // nlohmann's reader takes a NUL byte for the end of the input, so that a document followed by a
  // NUL and anything (a file zero-filled after a crash) would read as the document. JSON text has
  // no NUL outside a string, and a string spells it \u0000.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw InputError(fmt::format("{}: malformed JSON: a NUL byte at offset {} (JSON text has none)", source, nul));
  }
  Json document;
  DocumentBuilder<Json> builder(document, source);
  try {
    Json::sax_parse(text, &builder);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed JSON: {}", source, e.what()));
  }
  return document;
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string_view source) {
  return parse<nlohmann::json>(text, source);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view source) {
  return parse<nlohmann::ordered_json>(text, source);
}

}  // namespace zb
