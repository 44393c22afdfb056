#include "framework/serve/endpoint.h"

namespace skiff::serve {

Registry<EndpointFactory>& endpoints() {
  static auto* registry = new Registry<EndpointFactory>("serve endpoints");  // leaked: filled by static registrars
  return *registry;
}

}  // namespace skiff::serve
