// python_json.h — JSON written back as Python's json.dumps writes it.
//
// Chat templates print tools and tool-call arguments with transformers'
// `tojson` filter: json.dumps(value, ensure_ascii=False) on what
// json.loads read.  Rendering byte-identical prompts needs the same text:
// ", " and ": " separators, keys in first-seen order with a repeated key's
// last value (a Python dict), non-ASCII kept, control characters as
// \u00xx, integers as written (-0 as 0), other numbers as Python's float
// repr (shortest round trip; 1e-05, 1e+16, 1.0) and overflow as Infinity.
#pragma once

#include <string>
#include <string_view>

#include "text/json_lite.h"

namespace reset::python_json {

// json.dumps(value, ensure_ascii=False).
std::string dumps(const json_lite::Value &value);
// Append the same to out.
void dump_to(std::string &out, const json_lite::Value &value);
// repr(float(x)) for a finite x; "Infinity", "-Infinity", "NaN" otherwise (json.dumps's words).
std::string float_repr(double x);

}  // namespace reset::python_json
