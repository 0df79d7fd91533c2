#pragma once
// The engine's public API. An Engine owns one worker thread; models are loaded once and shared;
// a Session is one conversation's state (its caches live across turns); a Request asks a
// session to continue from a token context and streams Events back. Callers never block on
// generation: submit() returns at once, events arrive on the engine thread (the app's bridge
// turns them into queued signals), and cancel() takes effect within one decode step (or one
// prefill chunk while the prompt is read).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "day0/status.h"

namespace day0 {

struct EngineOptions {
  int threads = 0;  // CPU threads for compute; 0 = one per hardware thread
};

struct ModelOptions {
  // "cpu", "cuda" or "cuda:N" (gpt-oss). Without a usable GPU, "cuda" logs why and uses the CPU.
  std::string device = "cpu";
  std::int64_t kv_page_tokens = 256;
  // Positions a session may hold: 0 takes the model's max_position_embeddings, reduced to what
  // memory allows (never below 4096); a larger value than the model's is refused, and so is one
  // whose caches would not fit.
  std::int64_t max_context = 0;
  // What the memory plan may use, in bytes: 0 takes DAY0_MEMORY_LIMIT_BYTES when set, else
  // MemAvailable less a reserve of 512 MiB. Loading is refused when the model does not fit.
  std::uint64_t memory_limit_bytes = 0;
  // Routed experts (CPU): 0 lets the memory plan choose: they stay memory-mapped when the whole
  // model fits, else they are read from disk into a cache of what memory is left, as tokens are
  // routed to them. A size streams them through a cache of that many bytes.
  std::uint64_t expert_cache_bytes = 0;
  // Streamed experts are read with O_DIRECT (bypassing the page cache) where the filesystem allows.
  bool direct_expert_reads = false;
};

// Routed experts read from disk into a cache as tokens are routed to them, and what that has
// cost so far (lookups, hits and misses count experts; bytes and seconds count the reads).
struct ExpertStreaming {
  bool streamed = false;
  bool direct = false;             // O_DIRECT reads in effect
  std::uint64_t cache_bytes = 0;   // the cache's size
  std::uint64_t expert_bytes = 0;  // every routed expert of the checkpoint
  std::uint64_t lookups = 0, hits = 0, misses = 0, evictions = 0, bytes_read = 0;
  double read_seconds = 0;  // time generation waited for reads
};

struct ModelSummary {
  std::string model_type;
  std::string family;
  std::int64_t vocab_size = 0;
  std::int64_t hidden_size = 0;
  std::int64_t max_context = 0;
  std::vector<std::int32_t> eos_token_ids;  // from generation_config.json and config.json
  std::string device = "cpu";               // where it runs: "cpu" or "cuda:N"
  // Device memory by category (weights, expert_cache, fp8_workspace, kv_cache, activations,
  // peak_total), in bytes; empty on the CPU.
  std::vector<std::pair<std::string, std::uint64_t>> device_memory;
  std::uint64_t decode_bytes_per_token = 0;  // weights one decode step reads, for rooflines
  // For a model that reads images: the tokens that stand for one image in a prompt (begin,
  // image, end; the engine expands the image token to the image's features). Empty otherwise.
  std::vector<std::int32_t> image_placeholder_ids;
  std::int32_t image_token_id = -1;  // the image token among them (-1: the model reads no images)
  // The checkpoint has a vision encoder but the program it was loaded into (a GPU one) takes no
  // images: it takes them once loaded on the CPU.
  bool vision_needs_cpu = false;
  // The memory plan on the CPU (limits/memory_plan.h): bytes needed for the weights, the session
  // state at max_context and workspaces, and what they were checked against; 0 on a GPU.
  std::uint64_t planned_bytes = 0;
  std::uint64_t available_bytes = 0;
  ExpertStreaming experts;  // streamed == false: the experts are mapped with the other weights
};

struct Sampling {
  float temperature = 0.0f;  // 0: greedy
  int top_k = 0;             // 0: off
  float top_p = 1.0f;        // 1: off
  float min_p = 0.0f;        // 0: off
  float repetition_penalty = 1.0f;  // 1: off; divides positive logits of seen tokens, multiplies negative
  float presence_penalty = 0.0f;    // subtracted once from the logit of every seen token
  std::uint64_t seed = 0;
};

struct StopRules {
  std::int64_t max_new_tokens = 256;
  bool stop_at_eos = true;
  std::vector<std::int32_t> extra_stop_ids;
  // Generation ends when the decoded text contains one of these; the text up to it is
  // delivered, the stop string itself is not. Needs the model folder's tokenizer.
  std::vector<std::string> stop_strings;
};

struct Request {
  // The whole context to continue from. The session reuses its cache for the longest common
  // prefix with what it already holds, so a follow-up turn prefills only the new tokens, and an
  // edited or regenerated turn prefills from where it differs.
  std::vector<std::int32_t> context;
  // Images (PNG or JPEG files) for models that take them: each occurrence of the model's image
  // token in `context` stands for the next image, earlier turns' images included. The session
  // reuses its cache only up to the first image whose pixels differ from what it holds.
  std::vector<std::filesystem::path> images;
  Sampling sampling;
  StopRules stop;
};

enum class DoneReason { eos, stop_string, max_tokens, cancelled, error };
const char* done_reason_name(DoneReason reason);

struct GenerationStats {
  std::int64_t context_tokens = 0;   // tokens in the request's context
  std::int64_t reused_tokens = 0;    // served from the session's cache
  std::int64_t prefilled_tokens = 0;
  std::int64_t generated_tokens = 0;
  double time_to_first_token_ms = 0;
  double prefill_tokens_per_second = 0;
  double decode_tokens_per_second = 0;
};

// Where a piece of generated text belongs: the model's reasoning (gpt-oss's analysis channel,
// <think> blocks), the answer, a commentary preamble, or a tool call's arguments.
enum class OutputChannel { reasoning, answer, commentary, tool_call };
const char* output_channel_name(OutputChannel channel);

struct OutputPiece {
  OutputChannel channel = OutputChannel::answer;
  std::string text;
  std::string recipient;  // tool calls: "functions.get_weather"
};

struct Event {
  // progress: how far the prompt's prefill has come, sent before the first chunk is fed (0 of
  // the total) and after each chunk (cancel() is honoured between chunks); tokens follow, then
  // done or error. A request that fails before prefilling sends none.
  enum class Kind { token, done, error, progress } kind = Kind::token;
  std::int32_t token = -1;  // Kind::token
  // Kind::progress: prompt tokens fed so far and to feed in all (the context less what the
  // session's cache already held).
  std::int64_t prefill_done = 0;
  std::int64_t prefill_total = 0;
  // Text settled by this event, split by channel, when the model folder has a tokenizer: a
  // token's text (often empty while a UTF-8 character or a marker is incomplete), and on done
  // the rest. End-of-turn tokens add no text.
  std::vector<OutputPiece> text;
  GenerationStats stats;    // Kind::done and Kind::error
  DoneReason reason = DoneReason::eos;
  Status status;            // Kind::error
};
using EventCallback = std::function<void(const Event&)>;

class Model;
class Session;

class RequestHandle {
 public:
  virtual ~RequestHandle() = default;
  virtual void cancel() = 0;
  // Blocks until the request has finished (done or error was delivered).
  virtual void wait() = 0;
  virtual bool finished() const = 0;
};

class Engine {
 public:
  static std::unique_ptr<Engine> create(const EngineOptions& options = {});
  virtual ~Engine() = default;

  // Loads (maps and validates) a model folder. Runs on the calling thread: the app calls it from
  // a worker; the engine thread keeps serving other sessions meanwhile.
  virtual Result<std::shared_ptr<Model>> load_model(const std::filesystem::path& dir, const ModelOptions& options = {}) = 0;
  virtual std::shared_ptr<Session> new_session(const std::shared_ptr<Model>& model) = 0;

  // Queues a request on the engine thread. Events are delivered on that thread, in order, the
  // last one being done or error.
  virtual std::shared_ptr<RequestHandle> submit(const std::shared_ptr<Session>& session, Request request,
                                                EventCallback on_event) = 0;

  // Feeds `tokens` after what the session holds and returns their logits [tokens, vocab],
  // waiting for the engine thread (for tools and tests).
  virtual Result<std::vector<float>> append_logits(const std::shared_ptr<Session>& session,
                                                   std::span<const std::int32_t> tokens) = 0;
};

ModelSummary describe(const Model& model);
// For a model that reads images: the positions one image of width x height pixels takes in a
// prompt once its image token is expanded (the vision encoder's tokens for the image as the
// model's processor resizes it). An error for a model that reads text only or an impossible size.
Result<std::int64_t> image_token_count(const Model& model, std::int64_t width, std::int64_t height);
// The same for a PNG or JPEG file (decoded to learn its size).
Result<std::int64_t> image_file_token_count(const Model& model, const std::filesystem::path& file);
// Positions the session holds.
std::int64_t session_length(const Session& session);

}  // namespace day0
