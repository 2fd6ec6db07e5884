// Suggestions for mistyped names (util/suggest.h): the one distance and the one threshold that
// config keys and values, CSV columns and subcommands share.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "util/suggest.h"

using namespace tn;

TEST_CASE("suggest: edit distance counts a swap of neighbours as one edit and ignores case") {
  CHECK(edit_distance("sdg", "sgd") == 1);
  CHECK(edit_distance("trian", "train") == 1);
  CHECK(edit_distance("Species", "species") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggest: the limit is half the longer name, two edits up to 8 letters, one more per 3 after") {
  CHECK(suggestion_limit(0) == 0);
  CHECK(suggestion_limit(1) == 0);  // never 'y' for 'x'
  CHECK(suggestion_limit(2) == 1);
  CHECK(suggestion_limit(3) == 1);
  CHECK(suggestion_limit(4) == 2);
  CHECK(suggestion_limit(8) == 2);
  CHECK(suggestion_limit(9) == 3);
  CHECK(suggestion_limit(11) == 3);
  CHECK(suggestion_limit(12) == 4);
  CHECK(suggestion_limit(20) == 6);
}

TEST_CASE("suggest: the nearest name within the limit, the first on a tie, none when nothing is close") {
  const std::vector<std::string> header = {"a", "g", "b", "y"};
  CHECK(did_you_mean("gg", header) == "; did you mean 'g'?");  // 1 edit of 2 letters
  CHECK(did_you_mean("x", header).empty());                    // 1 edit of 1 letter: a guess, not a typo
  CHECK(nearest_name("optimiser", {"model", "optimizer", "train"}) == "optimizer");
  CHECK(nearest_name("TRIAN", {"train", "eval"}) == "train");
  CHECK(nearest_name("abcd", {"abxy", "abzw"}) == "abxy");  // both 2 edits: the first
  CHECK(nearest_name("abcd", {"wxyz"}).empty());
  CHECK(nearest_name("zzzzzz", {"epochs", "batch_size", "shuffle"}).empty());
  // A long name: three edits are within its limit (4 of 12 letters), five are not.
  CHECK(nearest_name("spl_lngth", {"sepal_length", "species"}) == "sepal_length");
  CHECK(nearest_name("xxxxx_length", {"sepal_length"}).empty());
}
