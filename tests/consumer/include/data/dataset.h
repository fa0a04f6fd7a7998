// The consumer's own data/dataset.h, named like one of leangrad's headers on purpose: leangrad
// includes its headers as <leangrad/data/dataset.h> and puts only its include/ folder on the
// consumer's path, so neither file can stand in for the other (run_consumer.cmake).
#pragma once

namespace consumer {
struct Dataset {
  int size() const { return 3; }
};
}  // namespace consumer
