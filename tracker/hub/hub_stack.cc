#include "tracker/hub/asio_clock.h"
#include "tracker/hub/client.h"
#include "tracker/hub/curl_transport.h"

namespace hubwatch::hub {

HubStack::HubStack(boost::asio::io_context& io, HubClientOptions options)
    : HubStack(io, std::move(options), std::make_unique<InMemoryEtagCache>()) {}

HubStack::HubStack(boost::asio::io_context& io, HubClientOptions options,
                   std::unique_ptr<EtagCache> cache)
    : transport_(std::make_unique<CurlTransport>(
          io, CurlTransportOptions{.ca_file = options.settings.ca_file})),
      clock_(MakeAsioClock(io)),
      random_(MakeSystemRandom()),
      cache_(std::move(cache)) {
  HubClientDeps deps;
  deps.transport = transport_.get();
  deps.clock = clock_.get();
  deps.random = random_.get();
  deps.etag_cache = cache_.get();
  client_ = std::make_unique<HubClient>(std::move(options), deps);
}

HubStack::~HubStack() {
  client_.reset();
  transport_.reset();
}

}  // namespace hubwatch::hub
