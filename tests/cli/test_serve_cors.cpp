// test_serve_cors.cpp — `reset serve --allowed-origins` (CorsPolicy, samples/reset/serve_request.cpp):
// which option texts are origins, and which request Origin headers each allows.  test_serve.py checks
// the headers on the wire.
#include <doctest/doctest.h>

#include <string>

#include "serve.h"

using namespace cli::serve;

TEST_CASE("serve CORS: the option's origins") {
    CorsPolicy none;
    CHECK_FALSE(none.enabled());
    CHECK(none.allow("https://ui.example.com") == "");

    CorsPolicy list;
    std::string error;
    REQUIRE(list.parse("https://ui.example.com,http://localhost:3000,http://[::1]:8080,HTTP://Caps.Example", &error));
    CHECK(list.enabled());
    CHECK(list.allow("https://ui.example.com") == "https://ui.example.com");  // the origin itself, not *
    CHECK(list.allow("http://localhost:3000") == "http://localhost:3000");
    CHECK(list.allow("http://[::1]:8080") == "http://[::1]:8080");
    CHECK(list.allow("http://caps.example") == "http://caps.example");  // scheme and host compare lower-cased
    CHECK(list.allow("http://ui.example.com") == "");                   // another scheme is another origin
    CHECK(list.allow("https://ui.example.com:443") == "");              // as written: browsers drop default ports
    CHECK(list.allow("http://localhost:3001") == "");
    CHECK(list.allow("https://evil.example.com") == "");
    CHECK(list.allow("null") == "");
    CHECK(list.allow("") == "");

    CorsPolicy any;
    REQUIRE(any.parse("*", &error));
    CHECK(any.allow("https://anything.example") == "*");
    CHECK(any.allow("") == "");  // no Origin: not a cross-origin request, no header

    for (const char *bad : {"https://ui.example.com/", "https://ui.example.com/path", "ui.example.com",
                            "ftp://ui.example.com", "https://", "https://ui example.com", "https://ui.example.com:",
                            "https://ui.example.com:99999", "https://user@ui.example.com", "http://[]", "a,,b",
                            "https://ok.example,", ""}) {
        CorsPolicy p;
        error.clear();
        CHECK_MESSAGE(!p.parse(bad, &error), bad);
        CHECK_MESSAGE(!error.empty(), bad);
        CHECK_MESSAGE(!p.enabled(), bad);  // a refused list leaves nothing allowed
    }
}
