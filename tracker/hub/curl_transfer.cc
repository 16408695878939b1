#include "tracker/hub/curl_transfer.h"

#include <string_view>

namespace hubwatch::hub {
namespace {

TransportErrorKind KindOf(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportErrorKind::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportErrorKind::kConnect;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    // An h2 stream reset, or the connection under it closed (a front restarting): the request
    // is lost, not malformed; the exchange retries it like a broken HTTP/1.1 connection.
    case CURLE_HTTP2_STREAM:
      return TransportErrorKind::kConnectionReset;
    case CURLE_PARTIAL_FILE:
      return TransportErrorKind::kTruncated;
    // CURLE_SSL_CACERT is CURLE_PEER_FAILED_VERIFICATION (an unknown CA, another host's name,
    // an expired or not yet valid certificate); CURLE_SSL_CACERT_BADFILE: hub.ca_file unusable.
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return TransportErrorKind::kCertificate;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return TransportErrorKind::kProtocol;
    default:
      return TransportErrorKind::kOther;
  }
}

size_t OnWrite(char* data, size_t size, size_t count, void* userp) {
  auto* transfer = static_cast<CurlTransfer*>(userp);
  const size_t n = size * count;
  HttpResponse& r = transfer->response;
  if (r.body.size() + n > transfer->request.max_body_bytes) {
    r.body.append(data, transfer->request.max_body_bytes - r.body.size());
    r.body_limit_hit = true;
    return CURL_WRITEFUNC_ERROR;
  }
  r.body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* userp) {
  auto* transfer = static_cast<CurlTransfer*>(userp);
  const size_t n = size * count;
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    transfer->response.headers = HttpHeaders();  // a new response (after 1xx)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  transfer->response.headers.Add(std::string(line.substr(0, colon)), std::string(value));
  return n;
}

}  // namespace

CurlTransfer::~CurlTransfer() {
  if (easy != nullptr) curl_easy_cleanup(easy);
  if (header_list != nullptr) curl_slist_free_all(header_list);
}

void ConfigureEasy(CurlTransfer& t, CURL* easy, const CurlEasySettings& settings) {
  t.easy = easy;
  CURL* e = easy;
  const HttpRequest& req = t.request;
  curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, settings.close_socket);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, settings.close_socket_data);
  // Verification is always on (set again: the handle may come from curl_easy_reset).
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  if (settings.ca_file != nullptr) {
    curl_easy_setopt(e, CURLOPT_CAINFO, settings.ca_file);
    curl_easy_setopt(e, CURLOPT_CAPATH, nullptr);  // the bundle only, not the system directory
  }
  curl_easy_setopt(e, CURLOPT_SHARE, settings.share);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                   settings.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
  // Waiting for a connection that may multiplex only pays off where h2 can be negotiated;
  // on cleartext HTTP/1.1 it would serialize simultaneous transfers onto one connection.
  const bool tls = req.url.starts_with("https://");
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, settings.http2 && tls ? 1L : 0L);
  if (req.method == HttpMethod::kHead) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  if (req.accept_compressed) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  const bool has_accept_encoding = req.headers.Has("Accept-Encoding");
  for (const auto& [name, value] : req.headers.entries()) {
    const std::string line = name + ": " + value;
    t.header_list = curl_slist_append(t.header_list, line.c_str());
  }
  if (!req.accept_compressed && !has_accept_encoding) {
    t.header_list = curl_slist_append(t.header_list, "Accept-Encoding: identity");
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.header_list);
}

TransportOutcome CompletedOutcome(CurlTransfer& t, CURLcode code) {
  HttpResponse& r = t.response;
  long status = 0, request_size = 0, header_size = 0, version = 0, connects = 0;
  curl_off_t downloaded = 0, uploaded = 0;
  curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_getinfo(t.easy, CURLINFO_REQUEST_SIZE, &request_size);
  curl_easy_getinfo(t.easy, CURLINFO_HEADER_SIZE, &header_size);
  curl_easy_getinfo(t.easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded);
  curl_easy_getinfo(t.easy, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  curl_easy_getinfo(t.easy, CURLINFO_HTTP_VERSION, &version);
  curl_easy_getinfo(t.easy, CURLINFO_NUM_CONNECTS, &connects);
  r.status = static_cast<int>(status);
  r.url = t.request.url;
  r.bytes_sent = static_cast<uint64_t>(request_size) + static_cast<uint64_t>(uploaded);
  r.bytes_received = static_cast<uint64_t>(header_size) + static_cast<uint64_t>(downloaded);
  r.reused_connection = connects == 0;
  r.http_version = version == CURL_HTTP_VERSION_2_0   ? "2"
                   : version == CURL_HTTP_VERSION_1_0 ? "1.0"
                                                      : "1.1";
  TransportOutcome outcome;
  const bool cut_by_limit = code == CURLE_WRITE_ERROR && r.body_limit_hit;
  if (code != CURLE_OK && !cut_by_limit) {
    std::string message = t.error_buffer[0] != '\0' ? t.error_buffer : curl_easy_strerror(code);
    outcome.error = TransportError{KindOf(code), static_cast<int>(code), std::move(message)};
  }
  outcome.response = std::move(r);
  return outcome;
}

}  // namespace hubwatch::hub
