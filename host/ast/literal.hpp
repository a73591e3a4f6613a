// Python's spelling of literal values, exactly as Python 3.11's repr() writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace htp::ast {

/// repr(float): "1.0", "0.0001", "1e-05", "1e+16", "-0.0", "inf", "nan".
std::string float_repr(double value);

/// repr(complex): "1j", "(1+2j)", "(-0-1.5j)", "infj".
std::string complex_repr(double real, double imag);

/// repr(str) of generalized UTF-8 text: quotes chosen and characters escaped as Python does.
std::string str_repr(std::string_view utf8);

/// repr(bytes): b'...' with Python's quote choice and escapes.
std::string bytes_repr(std::string_view data);

/// Appends what Python's 'unicode_escape' codec makes of the one character `cp`
/// (\\, \t, \n, \r, \xhh, \uhhhh, \Uhhhhhhhh, or the character itself when it is printable ASCII).
void append_unicode_escape(std::string &out, uint32_t cp);

} // namespace htp::ast
