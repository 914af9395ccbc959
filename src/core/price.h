// The bounds of a price per GPU-hour and of a cost budget, in any currency.
#pragma once

namespace trainplan {

// Past this a price is a slip, not a currency: 1e308 made every cost
// infinite (printed as JSON null). A GPU-hour costs about 1e6 in the
// currencies with the most units to a dollar.
inline constexpr double kMostPricePerGpuHour = 1e9;
// A cost budget past this buys more GPU-hours than any plan can use.
inline constexpr double kMostCostBudget = 1e18;

}  // namespace trainplan
