// The engine thread: a queue of jobs run one at a time on a dedicated thread, so callers never
// block on compute, and requests of different sessions are served in order.
#include "day0/engine.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "core/thread_pool.h"
#include "day0/chat.h"
#include "day0/log.h"
#include "io/image_decode.h"
#include "io/json_util.h"
#include "io/model_config.h"
#include "limits/request_limits.h"
#include "models/architecture.h"
#include "models/loaded_model.h"
#include "runtime/sampler.h"
#include "vision/image_input.h"

namespace day0 {

const char* done_reason_name(DoneReason reason) {
  switch (reason) {
    case DoneReason::eos: return "eos";
    case DoneReason::stop_string: return "stop_string";
    case DoneReason::max_tokens: return "max_tokens";
    case DoneReason::cancelled: return "cancelled";
    case DoneReason::error: return "error";
  }
  return "unknown";
}

class Model {
 public:
  std::unique_ptr<models::LoadedModel> loaded;
  ModelSummary summary;
  std::optional<Tokenizer> tokenizer;      // when the folder has tokenizer.json
  std::optional<ChatFormatter> formatter;  // when it also has a chat template
};

class Session {
 public:
  std::shared_ptr<Model> model;
  std::unique_ptr<models::SessionState> state;
  std::vector<std::int32_t> tokens;  // what `state` holds, position by position
  // Per position: the token, or for image rows a key of the image's pixels (vision/image_input.h).
  std::vector<std::int64_t> keys;
  std::map<std::uint64_t, vision::EncodedImage> images;  // encoded images by pixel hash
};

ModelSummary describe(const Model& model) {
  ModelSummary summary = model.summary;
  if (model.loaded) {
    summary.device_memory = model.loaded->memory_report();
    summary.decode_bytes_per_token = model.loaded->decode_bytes_per_token();
    summary.experts = model.loaded->expert_streaming();
  }
  return summary;
}
std::int64_t session_length(const Session& session) { return static_cast<std::int64_t>(session.tokens.size()); }

Result<std::int64_t> image_token_count(const Model& model, std::int64_t width, std::int64_t height) {
  const auto* images = model.loaded ? vision::image_input(*model.loaded) : nullptr;
  if (images == nullptr && model.summary.vision_needs_cpu)
    return error(ErrorCode::unsupported,
                 "this model's vision tower runs on the CPU only: load the model on the CPU "
                 "(--device cpu; in the app, Device: CPU) to send it images");
  if (images == nullptr) return error(ErrorCode::unsupported, model.summary.model_type + " reads text only");
  return vision::image_token_count(height, width, images->processor());
}

Result<std::int64_t> image_file_token_count(const Model& model, const std::filesystem::path& file) {
  DAY0_ASSIGN_OR_RETURN(const io::RgbImage image, io::load_image_file(file));
  return image_token_count(model, image.width, image.height);
}

namespace {

using Clock = std::chrono::steady_clock;

// NaN or infinite logits mean weights holding NaN/inf (or an overflow): sampling from them would
// emit arbitrary tokens, so the request stops with the reason.
Status check_finite(const std::vector<float>& logits, std::int64_t position) {
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isfinite(logits[i]))
      return error(ErrorCode::corrupt_data,
                   "the model produced non-finite logits (" + std::string(std::isnan(logits[i]) ? "NaN" : "infinity") +
                       " for token " + std::to_string(i) + ") after position " + std::to_string(position) +
                       ": its weights hold NaN or infinity, or overflow; the checkpoint may be corrupt");
  return Status::ok();
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// eos_token_id may be an integer or a list, in config.json and generation_config.json.
void collect_eos(const nlohmann::json& j, std::vector<std::int32_t>* ids) {
  if (!j.is_object() || !j.contains("eos_token_id")) return;
  const auto& v = j["eos_token_id"];
  const auto add = [&](const nlohmann::json& x) {
    if (x.is_number_integer() && x.get<std::int64_t>() >= 0 && x.get<std::int64_t>() < (1ll << 31)) {
      const auto id = static_cast<std::int32_t>(x.get<std::int64_t>());
      if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
    }
  };
  if (v.is_array()) {
    for (const auto& x : v) add(x);
  } else {
    add(v);
  }
}

class RequestImpl final : public RequestHandle {
 public:
  void cancel() override { cancelled.store(true); }
  void wait() override {
    std::unique_lock lock(mutex);
    done_cv.wait(lock, [this] { return done; });
  }
  bool finished() const override {
    std::lock_guard lock(mutex);
    return done;
  }
  void finish() {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    done_cv.notify_all();
  }

  std::atomic<bool> cancelled{false};
  mutable std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
};

class EngineImpl final : public Engine {
 public:
  explicit EngineImpl(const EngineOptions& options)
      : pool_(static_cast<std::size_t>(std::max(0, options.threads))), thread_([this] { loop(); }) {}

  ~EngineImpl() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  Result<std::shared_ptr<Model>> load_model(const std::filesystem::path& dir, const ModelOptions& options) override {
    models::LoadOptions load_options;
    load_options.kv_page_tokens = options.kv_page_tokens;
    load_options.device = options.device;
    load_options.max_context = options.max_context;
    load_options.memory_limit_bytes = options.memory_limit_bytes;
    load_options.expert_cache_bytes = options.expert_cache_bytes;
    load_options.direct_expert_reads = options.direct_expert_reads;
    models::LoadPlan plan;
    DAY0_ASSIGN_OR_RETURN(auto loaded, models::load_model(dir, pool_, load_options, &plan));
    auto model = std::make_shared<Model>();
    DAY0_ASSIGN_OR_RETURN(const io::ModelConfig config, io::ModelConfig::load(dir));
    model->summary.model_type = config.model_type();
    if (const auto* arch = models::find_architecture(config.model_type())) model->summary.family = std::string(arch->family);
    model->summary.vocab_size = loaded->vocab_size();
    model->summary.hidden_size = loaded->hidden_size();
    // The context the memory plan granted (a GPU model keeps its own accounts).
    model->summary.max_context = plan.context > 0 ? plan.context : loaded->max_context();
    if (plan.context == 0 && options.max_context > 0)
      model->summary.max_context = std::min(options.max_context, loaded->max_context());
    model->summary.planned_bytes = plan.needed;
    model->summary.available_bytes = plan.available;
    model->summary.device = loaded->device_name();
    const auto* images = vision::image_input(*loaded);
    // A program without image input (a GPU program that reads text only) on a checkpoint with a
    // vision encoder says so, rather than "reads text only".
    model->summary.vision_needs_cpu = images == nullptr && config.vision().has_value();
    if (images != nullptr) {
      const vision::ImageTokenIds& t = images->image_tokens();
      for (const std::int32_t id : {t.begin, t.image, t.end})
        if (id >= 0) model->summary.image_placeholder_ids.push_back(id);
      model->summary.image_token_id = t.image;
    }
    collect_eos(config.json(), &model->summary.eos_token_ids);
    if (config.root().optional_child("text_config")) collect_eos(config.text().json(), &model->summary.eos_token_ids);
    std::error_code ec;
    if (std::filesystem::exists(dir / "generation_config.json", ec)) {
      auto generation = io::read_json_file(dir / "generation_config.json", 1 << 20);
      if (generation) {
        collect_eos(*generation, &model->summary.eos_token_ids);
      } else {
        DAY0_LOG_WARN("ignoring generation_config.json: {}", generation.status().message());
      }
    }
    if (std::filesystem::exists(dir / "tokenizer.json", ec)) {
      // tokenizer.json is parsed once: the formatter's tokenizer (shared) serves decoding too.
      // A tokenizer that is there but broken, or that makes ids the model has no row for, makes
      // the folder unusable for chat: refused here rather than at the first message.
      if (auto formatter = ChatFormatter::load(dir)) {
        model->tokenizer.emplace(formatter->tokenizer());
        model->formatter.emplace(std::move(*formatter));
      } else if (auto tokenizer = Tokenizer::load(dir)) {
        model->tokenizer.emplace(std::move(*tokenizer));
      } else {
        return tokenizer.status();
      }
      const auto ids = static_cast<std::int64_t>(model->tokenizer->vocab_size());
      if (ids > loaded->vocab_size())
        return error(ErrorCode::corrupt_data, (dir / "tokenizer.json").string() + " makes token ids up to " +
                                                  std::to_string(ids - 1) +
                                                  ", but the model's vocabulary (vocab_size in config.json) has " +
                                                  std::to_string(loaded->vocab_size()) +
                                                  " rows: the tokenizer belongs to another model");
    }
    model->loaded = std::move(loaded);
    DAY0_LOG_INFO("loaded {} from {}", model->summary.model_type, dir.string());
    return model;
  }

  std::shared_ptr<Session> new_session(const std::shared_ptr<Model>& model) override {
    auto session = std::make_shared<Session>();
    session->model = model;
    session->state = model->loaded->new_state();
    return session;
  }

  std::shared_ptr<RequestHandle> submit(const std::shared_ptr<Session>& session, Request request,
                                        EventCallback on_event) override {
    auto handle = std::make_shared<RequestImpl>();
    enqueue([this, session, request = std::move(request), on_event = std::move(on_event), handle]() mutable {
      // Allocation failures (a cache page, an activation buffer) end the request, not the process.
      try {
        run(*session, request, on_event, *handle);
      } catch (const std::bad_alloc&) {
        Event e;
        e.kind = Event::Kind::error;
        e.reason = DoneReason::error;
        e.status = error(ErrorCode::out_of_memory, "out of memory while generating; the conversation is too long "
                                                   "for the memory left, start a new one or free memory");
        on_event(e);
      }
      handle->finish();
    });
    return handle;
  }

  Result<std::vector<float>> append_logits(const std::shared_ptr<Session>& session,
                                           std::span<const std::int32_t> tokens) override {
    std::vector<std::int32_t> copy(tokens.begin(), tokens.end());
    std::optional<Result<std::vector<float>>> result;
    std::mutex m;
    std::condition_variable cv;
    enqueue([&] {
      const std::int64_t vocab = session->model->loaded->vocab_size();
      const std::int64_t max_context = session->model->summary.max_context;
      const auto total = static_cast<std::int64_t>(session->tokens.size() + copy.size());
      std::vector<float> logits;
      Status s = Status::ok();
      if (total > max_context) {
        s = error(ErrorCode::invalid_argument, "the session would hold " + std::to_string(total) +
                                                   " tokens, the model's context holds " + std::to_string(max_context));
      } else if (!copy.empty()) {
        try {
          logits.resize(copy.size() * static_cast<std::size_t>(vocab));
          s = session->model->loaded->forward(*session->state, copy, static_cast<std::int64_t>(copy.size()),
                                              logits.data(), nullptr);
        } catch (const std::bad_alloc&) {
          s = error(ErrorCode::out_of_memory, "out of memory for the logits of " + std::to_string(copy.size()) +
                                                  " tokens; feed fewer at a time");
        }
      }
      std::lock_guard lock(m);
      if (s.is_ok()) {
        session->tokens.insert(session->tokens.end(), copy.begin(), copy.end());
        session->keys.insert(session->keys.end(), copy.begin(), copy.end());
        result.emplace(std::move(logits));
      } else {
        result.emplace(s);
      }
      cv.notify_all();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return result.has_value(); });
    return std::move(*result);
  }

 private:
  void enqueue(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }

  void loop() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stop requested and nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  void run(Session& session, const Request& request, const EventCallback& emit, RequestImpl& handle) {
    models::LoadedModel& model = *session.model->loaded;
    const std::int64_t vocab = model.vocab_size();
    GenerationStats stats;
    // Images: the context with its image tokens expanded; prefix reuse compares content keys.
    auto prompt = vision::prepare_prompt(model, request.context, request.images, &session.images);
    const std::vector<std::int32_t>& context = prompt ? prompt->tokens : request.context;
    stats.context_tokens = static_cast<std::int64_t>(context.size());
    const auto fail = [&](const Status& status) {
      Event e;
      e.kind = Event::Kind::error;
      e.status = status;
      e.reason = DoneReason::error;
      e.stats = stats;
      emit(e);
    };
    if (request.context.empty()) return fail(error(ErrorCode::invalid_argument, "the request has no context tokens"));
    if (!prompt) return fail(prompt.status());
    const std::int64_t max_context = session.model->summary.max_context;
    const std::int64_t room = max_context - static_cast<std::int64_t>(context.size());
    if (room <= 0)
      return fail(error(ErrorCode::invalid_argument,
                        "the conversation has " + std::to_string(context.size()) +
                            " tokens, the model's context holds " + std::to_string(max_context)));
    if (Status s = limits::validate_request(request, vocab); !s.is_ok()) return fail(s);

    // Reuse the longest common prefix; always feed at least one token to get logits.
    std::size_t common = 0;
    while (common < session.keys.size() && common < context.size() && session.keys[common] == prompt->keys[common])
      ++common;
    if (common == context.size()) --common;
    common = static_cast<std::size_t>(session.state->truncate(static_cast<std::int64_t>(common)));
    session.tokens.resize(common);
    session.keys.resize(common);
    stats.reused_tokens = static_cast<std::int64_t>(common);

    const auto start = Clock::now();
    std::vector<float> logits(static_cast<std::size_t>(vocab));
    // A model that picks tokens on its device (a GPU) samples there, greedy or not, so the logits
    // never travel; the CPU sampler serves the others (and prompts with images).
    const bool device_pick = !prompt->has_images() && model.picks_on_device();
    if (device_pick)
      if (Status s = model.begin_picking(request.sampling, context); !s.is_ok()) return fail(s);
    std::int32_t device_next = -1;
    std::size_t fed = common;
    const auto progress = [&] {
      Event e;
      e.kind = Event::Kind::progress;
      e.prefill_done = static_cast<std::int64_t>(fed - common);
      e.prefill_total = static_cast<std::int64_t>(context.size() - common);
      emit(e);
    };
    progress();
    while (fed < context.size()) {
      if (handle.cancelled.load()) break;
      // Tokens per prefill step (the model's choice); cancel is checked between steps.
      const auto step = static_cast<std::size_t>(std::max<std::int64_t>(1, model.prefill_chunk()));
      const std::size_t n = std::min<std::size_t>(step, context.size() - fed);
      const std::span<const std::int32_t> chunk(context.data() + fed, n);
      const bool last = fed + n == context.size();
      if (last && device_pick) {
        auto next = model.forward_pick(*session.state, chunk);
        if (!next) return fail(next.status());
        device_next = *next;
      } else if (prompt->has_images()) {
        const auto from = static_cast<std::int64_t>(fed);
        if (Status s = vision::forward_with_images(*prompt->model, *session.state, context, prompt->where,
                                                   prompt->images, from, from + static_cast<std::int64_t>(n),
                                                   last ? 1 : 0, logits.data(), nullptr);
            !s.is_ok())
          return fail(s);
      } else if (Status s = model.forward(*session.state, chunk, last ? 1 : 0, logits.data(), nullptr); !s.is_ok()) {
        return fail(s);
      }
      session.tokens.insert(session.tokens.end(), chunk.begin(), chunk.end());
      session.keys.insert(session.keys.end(), prompt->keys.begin() + static_cast<std::ptrdiff_t>(fed),
                          prompt->keys.begin() + static_cast<std::ptrdiff_t>(fed + n));
      fed += n;
      progress();
    }
    if (!device_pick && fed == context.size())
      if (Status s = check_finite(logits, static_cast<std::int64_t>(fed)); !s.is_ok()) return fail(s);
    stats.prefilled_tokens = static_cast<std::int64_t>(fed - common);
    const double prefill_ms = ms_since(start);
    if (stats.prefilled_tokens > 0 && prefill_ms > 0)
      stats.prefill_tokens_per_second = 1000.0 * static_cast<double>(stats.prefilled_tokens) / prefill_ms;

    runtime::Sampler sampler(request.sampling);
    std::vector<std::int32_t> stop_ids = request.stop.extra_stop_ids;
    if (request.stop.stop_at_eos)
      stop_ids.insert(stop_ids.end(), session.model->summary.eos_token_ids.begin(), session.model->summary.eos_token_ids.end());
    const std::int64_t max_new = std::min(request.stop.max_new_tokens, room);

    // Text: streamed through the tokenizer, then split into reasoning and answer.
    const Model& owner = *session.model;
    std::optional<StreamDecoder> decoder;
    std::optional<OutputSplitter> splitter;
    if (owner.tokenizer) {
      decoder.emplace(*owner.tokenizer, /*skip_special_tokens=*/false);
      if (owner.formatter) {
        // The prompt's end tells whether the turn opens inside a think block.
        const std::size_t tail = std::min<std::size_t>(context.size(), 8);
        std::vector<std::uint32_t> last(context.end() - static_cast<std::ptrdiff_t>(tail), context.end());
        splitter.emplace(owner.formatter->output_splitter(owner.tokenizer->decode(last)));
      }
    }
    const auto pieces = [&](const std::string& text, bool final) {
      std::vector<OutputPiece> out;
      if (splitter) {
        out = splitter->feed(text);
        if (final) {
          auto rest = splitter->finish();
          out.insert(out.end(), rest.begin(), rest.end());
        }
      } else if (!text.empty()) {
        out.push_back({OutputChannel::answer, text, ""});
      }
      return out;
    };
    // Stop strings: decoded text that could still grow into one is held back.
    std::vector<std::string> stop_strings;
    for (const auto& stop : request.stop.stop_strings)
      if (!stop.empty()) stop_strings.push_back(stop);
    if (!stop_strings.empty() && !decoder)
      return fail(error(ErrorCode::invalid_argument, "stop strings need the model's tokenizer.json"));
    std::string held;
    bool stop_string_hit = false;
    // Returns the text that is safe to deliver; sets stop_string_hit when a stop string appears.
    const auto screen = [&](const std::string& text, bool final) {
      if (stop_strings.empty()) return text;
      held += text;
      std::size_t first = std::string::npos;
      for (const auto& stop : stop_strings) first = std::min(first, held.find(stop));
      if (first != std::string::npos) {
        stop_string_hit = true;
        std::string out = held.substr(0, first);
        held.clear();
        return out;
      }
      std::size_t keep = 0;
      if (!final) {
        for (const auto& stop : stop_strings)
          for (std::size_t n = std::min(stop.size() - 1, held.size()); n > keep; --n)
            if (held.compare(held.size() - n, n, stop, 0, n) == 0) {
              keep = n;
              break;
            }
      }
      std::string out = held.substr(0, held.size() - keep);
      held.erase(0, held.size() - keep);
      return out;
    };
    DoneReason reason = DoneReason::max_tokens;
    Clock::time_point decode_start;
    if (handle.cancelled.load()) reason = DoneReason::cancelled;
    for (std::int64_t i = 0; i < max_new && reason != DoneReason::cancelled; ++i) {
      const std::int32_t token = device_pick ? device_next : sampler.sample(logits, session.tokens);
      if (i == 0) {
        stats.time_to_first_token_ms = ms_since(start);
        decode_start = Clock::now();
      }
      ++stats.generated_tokens;
      Event e;
      e.kind = Event::Kind::token;
      e.token = token;
      const bool stop = std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
      if (decoder && !stop) e.text = pieces(screen(decoder->feed(static_cast<std::uint32_t>(token)), false), false);
      emit(e);
      if (stop) {
        reason = DoneReason::eos;
        break;
      }
      if (stop_string_hit) {
        reason = DoneReason::stop_string;
        break;
      }
      if (handle.cancelled.load()) {
        reason = DoneReason::cancelled;
        break;
      }
      if (i + 1 == max_new) break;  // the last token needs no forward pass
      const std::int32_t one[1] = {token};
      if (device_pick) {
        auto next = model.forward_pick(*session.state, one);
        if (!next) return fail(next.status());
        device_next = *next;
      } else if (Status s = model.forward(*session.state, one, 1, logits.data(), nullptr); !s.is_ok()) {
        return fail(s);
      } else if (Status f = check_finite(logits, static_cast<std::int64_t>(session.tokens.size()) + 1); !f.is_ok()) {
        return fail(f);
      }
      session.tokens.push_back(token);
      session.keys.push_back(token);
    }
    if (stats.generated_tokens > 1) {
      const double decode_ms = ms_since(decode_start);
      if (decode_ms > 0) stats.decode_tokens_per_second = 1000.0 * static_cast<double>(stats.generated_tokens - 1) / decode_ms;
    }
    Event done;
    done.kind = Event::Kind::done;
    if (decoder) {
      // After a stop string, whatever the decoder still holds comes after it and is dropped.
      const std::string rest = stop_string_hit ? std::string() : screen(decoder->flush(), true);
      if (stop_string_hit) reason = DoneReason::stop_string;
      done.text = pieces(rest, true);
    }
    done.reason = reason;
    done.stats = stats;
    emit(done);
  }

  ThreadPool pool_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Engine> Engine::create(const EngineOptions& options) { return std::make_unique<EngineImpl>(options); }

}  // namespace day0
