// A failed plan's figures as JSON, for every answer that reports one (the
// command line's error object, plan --gpu's entries, the server's 422).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"

namespace trainplan::app {

// As `llm plan --json` gives its own: "failing" (the constraint),
// "shortfall" ({"limit", "closest", "unit"}, and for a deadline "over" and,
// where finite, "over_fraction", for a target "short_by") and "closest" (the
// configuration's named figures; counts as whole numbers). An empty object
// where the error has no figures.
nlohmann::json to_json(const std::optional<InfeasibleError::Shortfall>& s);

}  // namespace trainplan::app
