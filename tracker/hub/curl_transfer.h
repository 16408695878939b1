#pragma once

// CurlTransfer: one HTTP exchange on a curl easy handle, the per-request half of CurlTransport
// (the multi handle, sockets and timers are the other half). ConfigureEasy puts the request on
// the handle and points its callbacks at the transfer: headers are collected per response (a
// 1xx resets them), the body up to request.max_body_bytes. CompletedOutcome reads the result
// back once curl is done with it.
//
// Internal to CurlTransport. Thread safety: none; a transfer lives on the transport's loop
// thread, where curl calls its callbacks (inside curl_multi_socket_action). Ownership: the
// transfer owns its easy handle (until taken back for reuse) and its header list.

#include <curl/curl.h>

#include "tracker/hub/http_types.h"
#include "tracker/hub/transport.h"

namespace hubwatch::hub {

struct CurlTransfer {
  CurlTransfer() = default;
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;
  ~CurlTransfer();

  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  HttpRequest request;
  HttpResponse response;
  TransportCallback done;
  char error_buffer[CURL_ERROR_SIZE] = {};
};

// How the transport wants every easy handle set up.
struct CurlEasySettings {
  bool http2 = false;  // offer h2 over TLS (ALPN); HTTP/1.1 otherwise
  // The multi-wide close-socket callback and its data (curl may close a connection long after
  // the transfer that opened it is gone).
  curl_closesocket_callback close_socket = nullptr;
  void* close_socket_data = nullptr;
  CURLSH* share = nullptr;        // TLS session and DNS caches shared by the transport
  const char* ca_file = nullptr;  // trusted instead of the system store; null: the system's
};

// Takes over `easy` (fresh or reset) and configures it for `t.request`.
void ConfigureEasy(CurlTransfer& t, CURL* easy, const CurlEasySettings& settings);

// What the transfer ended as, curl having finished it with `code`; moves the response out. A
// body cut at max_body_bytes is a response (body_limit_hit), not an error.
TransportOutcome CompletedOutcome(CurlTransfer& t, CURLcode code);

}  // namespace hubwatch::hub
