// invalid_utf8 (util/utf8.h): where text read from a file stops being UTF-8.
#include <doctest/doctest.h>

#include <string>

#include "util/utf8.h"

TEST_CASE("utf8: well-formed text of every sequence length is valid") {
  CHECK(tn::invalid_utf8("") == std::string::npos);
  CHECK(tn::invalid_utf8("plain ascii\n") == std::string::npos);
  CHECK(tn::invalid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xf4\x8f\xbf\xbf") == std::string::npos);
  CHECK(tn::invalid_utf8(std::string("nul\0inside", 10)) == std::string::npos);
}

TEST_CASE("utf8: a stray, overlong, surrogate, too large or cut sequence is found at its first byte") {
  CHECK(tn::invalid_utf8("ab\xff") == 2);              // never in UTF-8
  CHECK(tn::invalid_utf8("caf\xe9!") == 3);            // Latin-1
  CHECK(tn::invalid_utf8("\x80") == 0);                // a continuation byte alone
  CHECK(tn::invalid_utf8("x\xc0\xaf") == 1);           // overlong '/'
  CHECK(tn::invalid_utf8("\xe0\x80\xaf") == 0);        // overlong, three bytes
  CHECK(tn::invalid_utf8("\xed\xa0\x80") == 0);        // a UTF-16 surrogate
  CHECK(tn::invalid_utf8("\xf4\x90\x80\x80") == 0);    // above U+10FFFF
  CHECK(tn::invalid_utf8("ok\xe2\x82") == 2);          // cut at the end
  CHECK(tn::invalid_utf8("\xe2\x28\xa1") == 0);        // a bad continuation byte
  CHECK(tn::invalid_utf8_where("ab\xff", 2) == "byte 0xff at offset 2");
}
