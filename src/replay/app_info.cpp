#include "replay/app_info.h"

namespace trainplan::replay {

std::optional<AppInfo> known_app(const std::string& name) {
  using D = MetricDirection;
  if (name == "cifar10") return AppInfo{name, D::kMax, 50000, 100, "top-1 accuracy"};
  if (name == "imagenet") return AppInfo{name, D::kMax, 1281167, 90, "top-1 accuracy"};
  if (name == "bert") return AppInfo{name, D::kMax, 88641, 2, "F1"};
  if (name == "yolov3") return AppInfo{name, D::kMin, 117264, 50, "validation loss"};
  if (name == "ncf") return AppInfo{name, D::kMax, 0, 10, "hit rate"};
  if (name == "deepspeech2") return AppInfo{name, D::kMin, 0, 80, "word error rate"};
  return std::nullopt;
}

}  // namespace trainplan::replay
