// The forms of a Document as HTML: labelled controls, values escaped.

#include "daemon/page/html_forms.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "daemon/page/href.h"

namespace hubwatch::page {
namespace {

// A text input named `name`; its id is the name with dots as dashes ("train-optimizer").
void Field(HtmlMarkup& html, std::string_view name, const char* label, const std::string& value,
           const char* hint) {
  std::string id(name);
  std::replace(id.begin(), id.end(), '.', '-');
  html.Raw("<p class=\"field\"><label for=\"");
  html.Raw(id);
  html.Raw("\">");
  html.Raw(label);
  html.Raw("</label> <input type=\"text\" inputmode=\"");
  html.Raw(name == "cards" || id != name ? "text" : "numeric");
  html.Raw("\" id=\"");
  html.Raw(id);
  html.Raw("\" name=\"");
  html.Raw(name);
  html.Raw("\" value=\"");
  html.Text(value);
  html.Raw("\" placeholder=\"");
  html.Raw(hint);
  html.Raw("\"></p>\n");
}

}  // namespace

void AppendPlanForm(HtmlMarkup& html, const PlanForm& f) {
  if (!IsSafeHref(f.action)) return;
  html.Raw("<form method=\"post\" action=\"");
  html.Text(f.action);
  html.Raw("\" class=\"plan\">\n");
  if (!f.error.empty()) {
    html.Raw(
        "<p class=\"error\" id=\"plan-error\" role=\"alert\"><strong>Not estimated:</strong> ");
    html.Text(f.error);
    html.Raw("</p>\n");
  }
  html.Raw(
      "<p class=\"field wide\"><label for=\"config\">config.json or safetensors header</label>\n"
      "<textarea id=\"config\" name=\"config\" rows=\"14\" cols=\"80\" spellcheck=\"false\" "
      "required");
  if (!f.error.empty()) html.Raw(" aria-describedby=\"plan-error\"");
  html.Raw(">\n");
  html.Text(f.config);
  html.Raw("</textarea></p>\n<div class=\"knobs\">\n");
  Field(html, "seq", "Sequence length", f.seq, "2048");
  Field(html, "batch", "Batch", f.batch, "1");
  Field(html, "context", "Serving context", f.context, "4096");
  Field(html, "lora_rank", "LoRA rank", f.lora_rank, "16");
  Field(html, "cards", "Cards", f.cards, "a100-80gb,h100");
  Field(html, "train.optimizer", "Optimizer", f.optimizer, "adamw");
  Field(html, "train.checkpointing", "Checkpointing", f.checkpointing, "none");
  Field(html, "runtime.metric", "Memory counted", f.metric, "card");
  html.Raw("</div>\n<p><button type=\"submit\">Estimate</button></p>\n</form>\n");
}

void AppendFilterForm(HtmlMarkup& html, const FilterForm& f) {
  if (!IsSafeHref(f.action)) return;
  html.Raw("<form method=\"get\" action=\"");
  html.Text(f.action);
  html.Raw("\" class=\"filters\">\n<div class=\"knobs\">\n");
  for (const FilterForm::Field& field : f.fields) {
    html.Raw("<p class=\"field\"><label for=\"f-");
    html.Text(field.name);
    html.Raw("\">");
    html.Text(field.label);
    html.Raw("</label> ");
    if (field.choices.empty()) {
      html.Raw("<input type=\"text\" id=\"f-");
      html.Text(field.name);
      html.Raw("\" name=\"");
      html.Text(field.name);
      html.Raw("\" value=\"");
      html.Text(field.value);
      html.Raw("\" placeholder=\"");
      html.Text(field.hint);
      html.Raw("\"></p>\n");
      continue;
    }
    html.Raw("<select id=\"f-");
    html.Text(field.name);
    html.Raw("\" name=\"");
    html.Text(field.name);
    html.Raw("\"><option value=\"\">any</option>");
    for (const std::string& choice : field.choices) {
      html.Raw("<option");
      if (choice == field.value) html.Raw(" selected");
      html.Raw(">");
      html.Text(choice);
      html.Raw("</option>");
    }
    html.Raw("</select></p>\n");
  }
  html.Raw("</div>\n<p><button type=\"submit\">Filter</button></p>\n</form>\n");
}

}  // namespace hubwatch::page
