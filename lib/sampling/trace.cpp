// trace.cpp — JSON Lines formatting of per-token signals.
#include "sampling/trace.h"

#include <cmath>
#include <cstdio>

namespace reset {

namespace {

void append_float(std::string &out, float v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
    out += buf;
}

// Length of the well-formed UTF-8 sequence starting at s[i], or 0.
size_t utf8_length(const unsigned char *s, size_t i, size_t n) {
    const unsigned char c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
    else return 0;
    if (i + len > n) return 0;
    for (size_t k = 1; k < len; ++k) {
        if ((s[i + k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

void append_string(std::string &out, const char *text, size_t n) {
    const unsigned char *s = reinterpret_cast<const unsigned char *>(text);
    out += '"';
    for (size_t i = 0; i < n;) {
        const unsigned char c = s[i];
        if (c == '"') { out += "\\\""; ++i; continue; }
        if (c == '\\') { out += "\\\\"; ++i; continue; }
        if (c == '\n') { out += "\\n"; ++i; continue; }
        if (c == '\t') { out += "\\t"; ++i; continue; }
        if (c == '\r') { out += "\\r"; ++i; continue; }
        if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
            continue;
        }
        const size_t len = utf8_length(s, i, n);
        if (len == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
            continue;
        }
        out.append(text + i, len);
        i += len;
    }
    out += '"';
}

}  // namespace

std::string trace_line(const TraceRecord &r) {
    std::string out;
    out.reserve(256 + r.text_len);
    out += "{\"sequence\":" + std::to_string(r.sequence);
    out += ",\"token\":" + std::to_string(r.token);
    if (r.has_logprob) {
        out += ",\"logprob\":";
        append_float(out, r.logprob);
    }
    if (r.top_count > 0) {
        out += ",\"top_logprobs\":[";
        for (int32_t i = 0; i < r.top_count; ++i) {
            out += i ? ",{\"token\":" : "{\"token\":";
            out += std::to_string(r.top[i].token);
            out += ",\"logprob\":";
            append_float(out, r.top[i].logprob);
            out += '}';
        }
        out += ']';
    }
    out += ",\"entropy\":";
    append_float(out, r.entropy);
    out += ",\"step_entropy\":";
    append_float(out, r.step_entropy);
    out += ",\"global_mean\":";
    append_float(out, r.global_mean);
    out += ",\"threshold\":";
    append_float(out, r.threshold);
    out += ",\"temperature\":";
    append_float(out, r.temperature);
    out += ",\"step_index\":" + std::to_string(r.step_index);
    out += r.boundary ? ",\"boundary\":true" : ",\"boundary\":false";
    out += r.uncertain ? ",\"uncertain\":true" : ",\"uncertain\":false";
    if (r.has_end) out += r.end ? ",\"end\":true" : ",\"end\":false";
    if (r.has_end && r.end) {
        // A caller's struct may hold anything here: write only the reasons reset.h names.
        static const char *const kReasons[] = {nullptr, "eos", "finished", "stop", "length"};
        if (r.end_reason >= RESET_END_EOS && r.end_reason <= RESET_END_LENGTH) {
            out += ",\"end_reason\":\"";
            out += kReasons[r.end_reason];
            out += '"';
            if (r.end_reason == RESET_END_STOP) out += ",\"stop_index\":" + std::to_string(r.stop_index);
        }
    }
    if (r.text) {
        out += ",\"text\":";
        append_string(out, r.text, r.text_len);
    }
    out += "}\n";
    return out;
}

}  // namespace reset
