#include "tracker/chat_template/canonical_conversations.h"

namespace hubwatch::chat_template {
namespace {

struct Source {
  const char* name;
  const char* json;
};

// Keep identical to tests/chat_template/corpus/conversations/<name>.json.
constexpr Source kSources[] = {
    {"assistant_last", R"json({
  "messages": [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Name a prime number."},
    {"role": "assistant", "content": "7"}
  ],
  "add_generation_prompt": false
}
)json"},
    {"multi_turn", R"json({
  "messages": [
    {"role": "user", "content": "Hello, how are you?"},
    {"role": "assistant", "content": "I'm doing great. How can I help you today?"},
    {"role": "user", "content": "Write a haiku about diffs."}
  ],
  "add_generation_prompt": true
}
)json"},
    {"rag_documents", R"json({
  "messages": [
    {"role": "user", "content": "Which planet has the most moons, and how many?"}
  ],
  "documents": [
    {"title": "Saturn", "text": "As of 2023, Saturn has 146 confirmed moons, more than any other planet."},
    {"title": "Jupiter", "text": "Jupiter has 95 officially recognised moons; Ganymede is the largest."}
  ],
  "add_generation_prompt": true
}
)json"},
    {"reasoning_history", R"json({
  "messages": [
    {"role": "user", "content": "What is 17 * 3?"},
    {"role": "assistant", "content": "<think>\n17 * 3 = 51.\n</think>\n\n17 * 3 = 51."},
    {"role": "user", "content": "And 17 * 4?"}
  ],
  "add_generation_prompt": true
}
)json"},
    {"role_alternation_error", R"json({
  "messages": [
    {"role": "user", "content": "First question."},
    {"role": "user", "content": "Second question, sent before any answer."}
  ],
  "add_generation_prompt": true
}
)json"},
    {"single_turn", R"json({
  "messages": [
    {"role": "user", "content": "What is the capital of France?"}
  ],
  "add_generation_prompt": false
}
)json"},
    {"single_turn_generation_prompt", R"json({
  "messages": [
    {"role": "user", "content": "What is the capital of France?"}
  ],
  "add_generation_prompt": true
}
)json"},
    {"system_message", R"json({
  "messages": [
    {"role": "system", "content": "You are a concise assistant. Answer in one sentence."},
    {"role": "user", "content": "Why is the sky blue?"},
    {"role": "assistant", "content": "  Sunlight scatters off air molecules, and blue light scatters most.  "},
    {"role": "user", "content": "And at sunset?"}
  ],
  "add_generation_prompt": true
}
)json"},
    {"tool_call_and_result", R"json({
  "messages": [
    {"role": "system", "content": "You can call tools."},
    {"role": "user", "content": "What's the weather like in Paris today?"},
    {
      "role": "assistant",
      "content": null,
      "tool_calls": [
        {
          "id": "call00001",
          "type": "function",
          "function": {"name": "get_current_weather", "arguments": {"location": "Paris, France", "unit": "celsius"}}
        }
      ]
    },
    {"role": "tool", "tool_call_id": "call00001", "name": "get_current_weather", "content": "{\"temperature\": 18, \"condition\": \"cloudy\"}"},
    {"role": "assistant", "content": "It is 18 °C and cloudy in Paris."},
    {"role": "user", "content": "Thanks! And tomorrow?"}
  ],
  "tools": [
    {
      "type": "function",
      "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
          "type": "object",
          "properties": {
            "location": {"type": "string", "description": "The city and country, e.g. Paris, France"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The temperature unit"}
          },
          "required": ["location"]
        }
      }
    }
  ],
  "add_generation_prompt": true
}
)json"},
    {"tools_available", R"json({
  "messages": [
    {"role": "user", "content": "What's the weather like in Paris today?"}
  ],
  "tools": [
    {
      "type": "function",
      "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {
          "type": "object",
          "properties": {
            "location": {"type": "string", "description": "The city and country, e.g. Paris, France"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The temperature unit"}
          },
          "required": ["location"]
        }
      }
    }
  ],
  "add_generation_prompt": true
}
)json"},
    {"unicode_and_quotes", R"json({
  "messages": [
    {"role": "user", "content": "Grüße aus Zürich! Say \"hi\" in 日本語, then print a tab:\tand a backslash: \\ 😀\nSecond line."}
  ],
  "add_generation_prompt": true
}
)json"},
};

}  // namespace

const std::vector<Conversation>& CanonicalConversations() {
  static const std::vector<Conversation>* const conversations = [] {
    auto* list = new std::vector<Conversation>();
    for (const Source& source : kSources) {
      list->push_back({source.name, nlohmann::ordered_json::parse(source.json)});
    }
    return list;
  }();
  return *conversations;
}

}  // namespace hubwatch::chat_template
