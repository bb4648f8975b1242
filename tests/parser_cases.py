"""A parser comparison corpus: replies from the public test suites of three peer parsers, and
what each peer reads in them, to hold tether's ReAct reading against (``test_parser_cases``).

A peer's *reading* is what it would run: a tool and its arguments, a final answer, or
nothing (it refuses the reply, or what it accepts cannot be a call of that tool). LangChain
and crewAI hand a tool its input as one string; it is read as the JSON object it holds, or
else, for a tool with exactly one required argument, as that argument's value (stripped),
which is what LangChain's tools do with a string and what an agent over JSON-argument tools
does with an object. Every case is parsed by tether with all of :data:`TOOLS` offered.

Each group says where it is adapted from; the three projects are MIT licensed. LangChain's
and json_repair's readings are checked against the installed libraries by the test; crewAI's
(not installed) are the ones its tests assert.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Action:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Final:
    answer: str


Reading = Action | Final | None


@dataclass(frozen=True)
class Case:
    id: str
    peer: str  # whose suite the reply comes from, and whose reading ``reads`` is
    reply: str
    reads: Reading


TOOLS: dict[str, tuple[str, ...]] = {
    "search": ("query",),
    "Search": ("query",),
    "search_tool": ("query",),
    "query_sql_db": ("query",),
    "Python": ("code",),
    "Terminal": ("commands",),
    "foo": ("input",),
    "query_order": ("order_id",),
    "pay_order": ("order_id", "amount"),
    "query": ("task", "context", "coworker"),
    "ask_coworker": ("task", "context", "coworker"),
    "record": (),  # takes any keys: the json_repair group's tool
}
"""The tools the cases call, by name, with their required (string) arguments."""


def _search(query: str) -> Action:
    return Action("search", {"query": query})


# --- LangChain ---------------------------------------------------------------------------
# Adapted from langchain-ai/langchain, libs/langchain/tests/unit_tests/agents/:
# output_parsers/test_react_single_input.py, test_mrkl.py and test_mrkl_output_parser.py.
# The peer is langchain-classic's ReActSingleInputOutputParser, run on each reply by the test.
LANGCHAIN = [
    Case(
        "lc_action",
        "langchain",
        "Thought: agent thought here\nAction: search\nAction Input: what is the temperature in SF?",
        _search("what is the temperature in SF?"),
    ),
    Case(
        "lc_finish",
        "langchain",
        "Thought: agent thought here\nFinal Answer: The temperature is 100",
        Final("The temperature is 100"),
    ),
    Case(
        "lc_action_with_finish",
        "langchain",
        "Thought: agent thought here\nAction: search Final Answer:\n"
        "Action Input: what is the temperature in SF?",
        None,
    ),
    Case(
        "lc_mrkl_action",
        "langchain",
        "Thought: I need to search for NBA\nAction: Search\nAction Input: NBA",
        Action("Search", {"query": "NBA"}),
    ),
    Case(
        "lc_mrkl_action_whitespace",
        "langchain",
        "Thought: I need to search for NBA\nAction: Search \nAction Input: NBA",
        Action("Search", {"query": "NBA"}),
    ),
    Case(
        "lc_mrkl_code_input",
        "langchain",
        "Now I need to write a unittest for the function.\n\n"
        "Action: Python\nAction Input:\n```\nimport unittest\n\nunittest.main()\n```",
        Action("Python", {"code": "```\nimport unittest\n\nunittest.main()\n```"}),
    ),
    Case(
        "lc_mrkl_newline_after_labels",
        "langchain",
        "\n    I can use the `ls` command to list the contents of the directory     and `grep` "
        "to search for the specific file.\n\n    Action:\n    Terminal\n\n    Action Input:\n"
        "    ls -l ~/.bashrc.d/\n    ",
        Action("Terminal", {"commands": "ls -l ~/.bashrc.d/"}),
    ),
    Case(
        "lc_mrkl_sql_query",
        "langchain",
        "\n    I should query for the largest single shift payment for every unique user.\n"
        '    Action: query_sql_db\n    Action Input:     SELECT "UserName", MAX(totalpayment) '
        'FROM user_shifts GROUP BY "UserName" ',
        Action(
            "query_sql_db",
            {"query": 'SELECT "UserName", MAX(totalpayment) FROM user_shifts GROUP BY "UserName'},
        ),
    ),
    Case(
        "lc_mrkl_final",
        "langchain",
        "Thought: I can now answer the question\nFinal Answer: 1994",
        Final("1994"),
    ),
    Case(
        "lc_mrkl_final_new_line",
        "langchain",
        "Thought: I can now answer the question\nFinal Answer:\n1994",
        Final("1994"),
    ),
    Case(
        "lc_mrkl_final_multiline",
        "langchain",
        "Thought: I can now answer the question\nFinal Answer: 1994\n1993",
        Final("1994\n1993"),
    ),
    Case(
        "lc_mrkl_no_action_input",
        "langchain",
        "Thought: I need to search for NBA\nAction: Search\nThought: NBA",
        None,
    ),
    Case(
        "lc_mrkl_no_action",
        "langchain",
        "Thought: I need to search for NBA\nThought: Search\nAction Input: NBA",
        None,
    ),
    Case(
        "lc_mrkl_action_observation_answer",
        "langchain",
        "Thought: I need to search for NBA\nAction: Search\nAction Input: NBA\n"
        "Observation: founded in 1994\nThought: I can now answer the question\n"
        "Final Answer: 1994",
        None,
    ),
    Case(
        "lc_parser_action",
        "langchain",
        "I can use the `foo` tool to achieve the goal.\n    Action: foo\n    Action Input: bar",
        Action("foo", {"input": "bar"}),
    ),
    Case(
        "lc_parser_final",
        "langchain",
        "Final Answer: The best pizza to eat is margaritta ",
        Final("The best pizza to eat is margaritta"),
    ),
    Case(
        "lc_parser_missing_action",
        "langchain",
        "I can use the `foo` tool to achieve the goal.",
        None,
    ),
    Case(
        "lc_parser_missing_action_input",
        "langchain",
        "I can use the `foo` tool to achieve the goal.\n    Action: foo",
        None,
    ),
    Case(
        "lc_parser_final_before_action",
        "langchain",
        "Final Answer: The best pizza to eat is margaritta\n\n        Action: foo\n"
        "        Action Input: bar\n        ",
        None,
    ),
    Case(
        "lc_parser_observation_first",
        "langchain",
        "\n        Observation: I can use the `foo` tool to achieve the goal.\n"
        "        Action: foo\n        Action Input: bar\n"
        "        Final Answer: The best pizza to eat is margaritta \n        ",
        None,
    ),
]

# --- the issue's forms, read by LangChain ------------------------------------------------
# Not from a peer's suite: the replies the issue names, and their ambiguous neighbours, with
# ReActSingleInputOutputParser's reading (run by the test) as the peer's.
ISSUE = [
    Case(
        "issue_json_then_prose",
        "langchain",
        'Thought: look it up\nAction: query_order\nAction Input: {"order_id": "ORD-1"}  '
        "(looking it up)",
        Action("query_order", {"order_id": '{"order_id": "ORD-1"}  (looking it up)'}),
    ),
    Case(
        "issue_quoted_bare_value",
        "langchain",
        'Thought: look it up\nAction: query_order\nAction Input: "ORD-1"',
        Action("query_order", {"order_id": "ORD-1"}),
    ),
    Case(
        "issue_bare_value",
        "langchain",
        "Thought: look it up\nAction: query_order\nAction Input: ORD-1",
        Action("query_order", {"order_id": "ORD-1"}),
    ),
    Case(
        "issue_call_syntax",
        "langchain",
        'Thought: look it up\nAction: query_order(order_id="ORD-1")',
        None,
    ),
    Case(
        "issue_bare_value_two_fields",
        "langchain",
        "Thought: pay it\nAction: pay_order\nAction Input: ORD-1",
        None,
    ),
    Case(
        "issue_two_objects",
        "langchain",
        'Thought: look both up\nAction: query_order\nAction Input: {"order_id": "ORD-1"} '
        '{"order_id": "ORD-2"}',
        Action("query_order", {"order_id": '{"order_id": "ORD-1"} {"order_id": "ORD-2"}'}),
    ),
    Case(
        "issue_two_actions",
        "langchain",
        'Thought: look both up\nAction: query_order\nAction Input: {"order_id": "ORD-1"}\n'
        'Action: query_order\nAction Input: {"order_id": "ORD-2"}',
        Action(
            "query_order",
            {
                "order_id": '{"order_id": "ORD-1"}\nAction: query_order\n'
                'Action Input: {"order_id": "ORD-2"}'
            },
        ),
    ),
]

# --- crewAI ------------------------------------------------------------------------------
# Adapted from crewAIInc/crewAI, lib/crewai/tests/agents/test_crew_agent_parser.py and
# test_parser_fabrication.py (crewai.agents.parser.parse); the readings are those the tests
# assert. "Action: None" replies become a final answer holding the Thought.
_ASK = '{"task": "Research XAI", "context": "Explainable AI", "coworker": "Senior Researcher"}'
_ASKED = Action(
    "ask_coworker",
    {"task": "Research XAI", "context": "Explainable AI", "coworker": "Senior Researcher"},
)
_TASK = (
    "What are some common challenges or barriers that you have observed or experienced when "
    "implementing AI-powered solutions in healthcare settings?"
)
_CONTEXT = (
    "As we've discussed recent advancements in AI applications in healthcare, it's crucial to "
    "acknowledge the potential hurdles. Some possible obstacles include..."
)


def _crew(id: str, action_input: str, reads: Reading) -> Case:
    reply = f"Thought: Let's find the temperature\nAction: search\nAction Input: {action_input}"
    return Case(id, "crewai", reply, reads)


def _coworker(id: str, action_input: str, reads: Reading) -> Case:
    reply = f"Thought: I should ask\nAction: ask_coworker\nAction Input: {action_input}"
    return Case(id, "crewai", reply, reads)


CREWAI = [
    Case(
        "crew_apostrophe",
        "crewai",
        "Thought: Let's find the temperature\nAction: search\n"
        "Action Input: what's the temperature in SF?",
        _search("what's the temperature in SF?"),
    ),
    Case(
        "crew_json_after_asterisks",
        "crewai",
        "\n    Thought: Let's find the information\n    Action: query\n    Action Input: ** "
        f'{{"task": "{_TASK}", "context": "{_CONTEXT}", "coworker": "Senior Researcher"}}\n    ',
        Action("query", {"task": _TASK, "context": _CONTEXT, "coworker": "Senior Researcher"}),
    ),
    _crew("crew_quoted", '"temperature in SF"', _search("temperature in SF")),
    _crew("crew_curly_braces", "{temperature in SF}", _search("{temperature in SF}")),
    _crew("crew_angle_brackets", "<temperature in SF>", _search("<temperature in SF>")),
    _crew("crew_parentheses", "(temperature in SF)", _search("(temperature in SF)")),
    _crew("crew_mixed_brackets", "[temperature in {SF}]", _search("[temperature in {SF}]")),
    _crew(
        "crew_nested_quotes",
        "\"what's the temperature in 'SF'?\"",
        _search("what's the temperature in 'SF'?"),
    ),
    _crew("crew_incomplete_json", '{"query": "temperature in SF"', _search("temperature in SF")),
    _crew(
        "crew_special_characters",
        "what is the temperature in SF? @$%^&*",
        _search("what is the temperature in SF? @$%^&*"),
    ),
    _crew(
        "crew_quoted_brackets",
        '"[what is the temperature in SF?]"',
        _search("[what is the temperature in SF?]"),
    ),
    _crew(
        "crew_quoted_apostrophe",
        '"what\'s the temperature in SF?"',
        _search("what's the temperature in SF?"),
    ),
    _crew(
        "crew_newlines",
        "what is\nthe temperature in SF?",
        _search("what is\nthe temperature in SF?"),
    ),
    _crew(
        "crew_escaped_characters",
        "what is the temperature in SF? \\n",
        _search("what is the temperature in SF? \\n"),
    ),
    _crew("crew_json_string", '{"query": "temperature in SF"}', _search("temperature in SF")),
    _crew(
        "crew_unbalanced_quote",
        '"what is the temperature in SF?',
        _search("what is the temperature in SF?"),
    ),
    Case(
        "crew_final_answer",
        "crewai",
        "Thought: I found the information\nFinal Answer: The temperature is 100 degrees",
        Final("The temperature is 100 degrees"),
    ),
    Case(
        "crew_missing_action",
        "crewai",
        "Thought: Let's find the temperature\nAction Input: what is the temperature in SF?",
        None,
    ),
    Case(
        "crew_missing_action_input",
        "crewai",
        "Thought: Let's find the temperature\nAction: search",
        None,
    ),
    _coworker(
        "crew_repair_unquoted_value_unclosed",
        '{"task": "Research XAI", "context": "Explainable AI", "coworker": Senior Researcher',
        _ASKED,
    ),
    _coworker("crew_repair_unrepairable", "{invalid_json", None),
    _coworker(
        "crew_repair_unquoted_keys",
        '{task: "Research XAI", context: "Explainable AI", coworker: Senior Researcher}',
        _ASKED,
    ),
    _coworker("crew_repair_unclosed", _ASK[:-1], _ASKED),
    _coworker("crew_repair_trailing_comma", _ASK[:-1] + ",}", _ASKED),
    _coworker(
        "crew_repair_single_quotes",
        "{'task': 'Research XAI', 'context': 'Explainable AI', 'coworker': 'Senior Researcher'}",
        _ASKED,
    ),
    _coworker(
        "crew_repair_mixed_quotes",
        "{'task': \"Research XAI\", 'context': \"Explainable AI\", "
        "'coworker': 'Senior Researcher'}",
        _ASKED,
    ),
    _coworker("crew_repair_newline_in_value", _ASK[:-2] + '\n"}', _ASKED),
    _coworker("crew_repair_missing_colon", _ASK.replace('"task":', '"task"'), _ASKED),
    _coworker("crew_repair_missing_comma", _ASK.replace('XAI",', 'XAI"'), _ASKED),
    _coworker("crew_repair_trailing_text", _ASK + " random text", _ASKED),
    _coworker(
        "crew_repair_special_character_keys",
        '{"task!@#": "Research XAI", "context$%^": "Explainable AI", '
        '"coworker&*()": "Senior Researcher"}',
        Action(
            "ask_coworker",
            {
                "task!@#": "Research XAI",
                "context$%^": "Explainable AI",
                "coworker&*()": "Senior Researcher",
            },
        ),
    ),
    Case(
        "crew_whitespace",
        "crewai",
        " Thought: Let's find the temperature \n Action: search \n "
        "Action Input: what is the temperature in SF? ",
        _search("what is the temperature in SF?"),
    ),
    Case(
        "crew_missing_action_part",
        "crewai",
        "Thought: Missing action\n    Action Input: invalid",
        None,
    ),
    Case(
        "crew_missing_action_input_part",
        "crewai",
        "Thought: Missing action input\n    Action: invalid",
        None,
    ),
    Case(
        "crew_action_none",
        "crewai",
        "Thought: I cannot use any tool for this.\nAction: None",
        Final("I cannot use any tool for this."),
    ),
    Case(
        "crew_action_none_reason",
        "crewai",
        "Thought: The tool is not available.\nAction: None (direct response required)",
        Final("The tool is not available."),
    ),
    Case(
        "crew_action_na",
        "crewai",
        "Thought: No action needed here.\nAction: N/A",
        Final("No action needed here."),
    ),
    Case(
        "crew_action_none_alone",
        "crewai",
        "Action: None",
        Final("I cannot perform this action with the available tools."),
    ),
    Case(
        "crew_fabricated_observation",
        "crewai",
        'Thought: I need to search for AI trends\nAction: search_tool\nAction Input: {"query": '
        '"AI trends"}\nObservation: AI trends include large language models and multimodal '
        "AI.\nFinal Answer: Based on my research, the top AI trends are LLMs and multimodal AI.",
        None,
    ),
    Case(
        "crew_legitimate_action",
        "crewai",
        'Thought: I need to search\nAction: search_tool\nAction Input: {"query": "AI trends"}',
        Action("search_tool", {"query": "AI trends"}),
    ),
    Case(
        "crew_legitimate_final",
        "crewai",
        "Thought: I have all the information\nFinal Answer: The answer is 42.",
        Final("The answer is 42."),
    ),
]


# --- json_repair -------------------------------------------------------------------------
# Adapted from mangiucugna/json_repair's tests (the inputs that hold an object, as an Action
# Input of the tool ``record``). The peer's reading is ``json_repair.loads`` of the text, run
# by the test with the installed version (where it differs from the test's expectation, the
# installed version's answer is recorded): an object, or None for any other value.
def _jr(id: str, text: str, reads: Reading) -> Case:
    return Case(f"jr_{id}", "json_repair", f"Action: record\nAction Input: {text}", reads)


# From tests/test_parse_object.py.
_JR_OBJECT = [
    _jr("object_empty", "{}", Action("record", {})),
    _jr(
        "object_python_true",
        '{ "key": "value", "key2": 1, "key3": True }',
        Action("record", {"key": "value", "key2": 1, "key3": True}),
    ),
    _jr("object_open_brace_only", "{", Action("record", {})),
    _jr(
        "object_bare_word_missing_comma",
        '{ "key": value, "key2": 1 "key3": null }',
        Action("record", {"key": "value", "key2": 1, "key3": None}),
    ),
    _jr("object_spaces", "   {  }   ", Action("record", {})),
    _jr("object_open_quote_only", '{"', Action("record", {})),
    _jr("object_unclosed_array", "{foo: [}", Action("record", {"foo": []})),
    _jr("object_empty_key_unclosed", '{"": "value"', Action("record", {"": "value"})),
    _jr("object_quote_inside_value", '{"key": "v"alue"}', Action("record", {"key": 'v"alue"'})),
    _jr(
        "object_comment_word",
        '{"value_1": true, COMMENT "value_2": "data"}',
        Action("record", {"value_1": True, "value_2": "data"}),
    ),
    _jr(
        "object_stray_words",
        '{"value_1": true, SHOULD_NOT_EXIST "value_2": "data" AAAA }',
        Action("record", {"value_1": True, "value_2": "data"}),
    ),
    _jr(
        "object_empty_key",
        '{"" : true, "key2": "value2"}',
        Action("record", {"": True, "key2": "value2"}),
    ),
    _jr(
        "object_doubled_quotes",
        '{""answer"":[{""traits"":\'\'Female aged 60+\'\',""answer1"":""5""}]}',
        Action("record", {"answer": [{"traits": "Female aged 60+", "answer1": "5"}]}),
    ),
    _jr(
        "object_values_missing_open_quote",
        '{ "words": abcdef", "numbers": 12345", "words2": ghijkl" }',
        Action("record", {"words": "abcdef", "numbers": 12345, "words2": "ghijkl"}),
    ),
    _jr(
        "object_missing_comma_after_string",
        '{"number": 1,"reason": "According...""ans": "YES"}',
        Action("record", {"number": 1, "reason": "According...", "ans": "YES"}),
    ),
    _jr("object_brace_inside_value", '{ "a" : "{ b": {} }" }', Action("record", {"a": "{ b"})),
    _jr("object_stray_true", '{"b": "xxxxx" true}', Action("record", {"b": "xxxxx"})),
    _jr(
        "object_quoted_word_inside_value",
        '{"key": "Lorem "ipsum" s,"}',
        Action("record", {"key": 'Lorem "ipsum" s,'}),
    ),
    _jr(
        "object_value_missing_open_quote",
        '{"lorem": ipsum, sic, datum.",}',
        Action("record", {"lorem": "ipsum, sic, datum."}),
    ),
    _jr(
        "object_value_never_closes",
        '{"lorem_ipsum": "sic tamet, quick brown fox. }',
        Action("record", {"lorem_ipsum": "sic tamet, quick brown fox."}),
    ),
    _jr(
        "object_unquoted_value",
        '{"key":value, " key2":"value2" }',
        Action("record", {"key": "value", " key2": "value2"}),
    ),
    _jr(
        "object_unquoted_value_missing_comma",
        '{"key":value "key2":"value2" }',
        Action("record", {"key": "value", "key2": "value2"}),
    ),
    _jr(
        "object_braces_inside_single_quotes",
        "{'text': 'words{words in brackets}more words'}",
        Action("record", {"text": "words{words in brackets}more words"}),
    ),
    _jr(
        "object_braces_inside_unquoted",
        "{text:words{words in brackets}}",
        Action("record", {"text": "words{words in brackets}"}),
    ),
    _jr(
        "object_braces_inside_unquoted_more",
        "{text:words{words in brackets}m}",
        Action("record", {"text": "words{words in brackets}m"}),
    ),
    _jr(
        "object_fence_after_unclosed",
        '{"key": "value, value2"```',
        Action("record", {"key": "value, value2"}),
    ),
    _jr(
        "object_unquoted_keys_values",
        "{key:value,key2:value2}",
        Action("record", {"key": "value", "key2": "value2"}),
    ),
    _jr("object_key_missing_close_quote", '{"key:"value"}', Action("record", {"key": "value"})),
    _jr(
        "object_arrays_after_value",
        '{ "key": ["arrayvalue"], ["arrayvalue1"], ["arrayvalue2"], "key3": "value3" }',
        Action("record", {"key": ["arrayvalue", "arrayvalue1", "arrayvalue2"], "key3": "value3"}),
    ),
    _jr(
        "object_missing_value",
        '{"key": , "key2": "value2"}',
        Action("record", {"key": "", "key2": "value2"}),
    ),
    _jr(
        "object_mismatched_bracket",
        '{"array":[{"key": "value"], "key2": "value2"}',
        Action("record", {"array": [{"key": "value"}], "key2": "value2"}),
    ),
    _jr(
        "merge_key_after_brace",
        '{"key": "value"}, "key2": "value2"}',
        Action("record", {"key": "value", "key2": "value2"}),
    ),
    _jr("merge_empty_array_after", '{"key": "value"}, []', Action("record", {"key": "value"})),
    _jr("merge_empty_object_after", '{"key": "value"}, {}', Action("record", {"key": "value"})),
    _jr(
        "merge_two_keys_after_brace",
        '{"key1": "value1"}, "key2": "value2", "key3": "value3"}',
        Action("record", {"key1": "value1", "key2": "value2", "key3": "value3"}),
    ),
    _jr("object_then_array", '{"key":"value"}[1,2,3,True]', None),
]

# From tests/test_json_repair.py.
_JR_GENERAL = [
    _jr(
        "valid_object",
        '{"name": "John", "age": 30, "city": "New York"}',
        Action("record", {"name": "John", "age": 30, "city": "New York"}),
    ),
    _jr(
        "valid_array_value",
        '{"employees":["John", "Anna", "Peter"]} ',
        Action("record", {"employees": ["John", "Anna", "Peter"]}),
    ),
    _jr("valid_colon_in_value", '{"key": "value:value"}', Action("record", {"key": "value:value"})),
    _jr(
        "valid_comma_in_value",
        '{"text": "The quick brown fox,"}',
        Action("record", {"text": "The quick brown fox,"}),
    ),
    _jr(
        "valid_apostrophe",
        '{"text": "The quick brown fox won\'t jump"}',
        Action("record", {"text": "The quick brown fox won't jump"}),
    ),
    _jr("unclosed_after_empty_value", '{"key": ""', Action("record", {"key": ""})),
    _jr(
        "valid_nested",
        '{"key1": {"key2": [1, 2, 3]}}',
        Action("record", {"key1": {"key2": [1, 2, 3]}}),
    ),
    _jr(
        "valid_wide_integer",
        '{"key": 12345678901234567890}',
        Action("record", {"key": 12345678901234567890}),
    ),
    _jr("valid_unicode", '{"key": "value\u263a"}', Action("record", {"key": "value☺"})),
    _jr(
        "valid_escaped_newline",
        '{"key": "value\\nvalue"}',
        Action("record", {"key": "value\nvalue"}),
    ),
    _jr(
        "prefixed_object",
        'Here is your JSON:\n{"text": "a\\n b c, floof: a\\n ... a b (c), floof: \\n a", "id": 8}',
        Action("record", {"text": "a\n b c, floof: a\n ... a b (c), floof: \n a", "id": 8}),
    ),
    _jr(
        "prefixed_object_then_prose",
        'Here is your JSON:\n{"text": "literal } and ]"}\nAdditional explanation.',
        Action("record", {"text": "literal } and ]"}),
    ),
    _jr(
        "stray_closing_brace",
        r"""{"tool_args": {"code": "# note\nconfig = {'type': 'object', 'properties': {}, """
        r"""'additionalProperties': True}"}}}""",
        Action(
            "record",
            {
                "tool_args": {
                    "code": "# note\nconfig = {'type': 'object', 'properties': {}, "
                    "'additionalProperties': True}"
                }
            },
        ),
    ),
    _jr(
        "prefixed_unclosed", 'Here is your JSON: {"key": "value', Action("record", {"key": "value"})
    ),
    _jr("array_then_object", '[]{"key":"value"}', Action("record", {"key": "value"})),
    _jr("two_objects", '{"key":"value"}, {"key":"value_after"}', None),
    _jr(
        "two_fenced_values",
        'lorem ```json {"key":"value"} ``` ipsum ```json [1,2,3,True] ``` 42',
        None,
    ),
    _jr(
        "fenced_after_prose",
        "\n         **Decision**: bla, bla (some clarification):\n\n        ```json\n"
        '        {\n          "key": "value"\n        }\n        ```\n        ',
        Action("record", {"key": "value"}),
    ),
    _jr(
        "fenced_after_numbered_prose",
        "\n        (1) Keep this note in the explanation.\n\n        ```json\n"
        '        {\n          "key": "value"\n        }\n        ```\n        ',
        Action("record", {"key": "value"}),
    ),
    _jr(
        "valid_literals",
        '{"key": true, "key2": false, "key3": null}',
        Action("record", {"key": True, "key2": False, "key3": None}),
    ),
    _jr(
        "bundle_unclosed_array",
        '\n{\n  "resourceType": "Bundle",\n  "id": "1",\n  "type": "collection",\n'
        '  "entry": [\n    {\n      "resource": {\n        "resourceType": "Patient",\n'
        '        "id": "1",\n        "name": [\n          {"use": "official", "family": '
        '"Corwin", "given": ["Keisha", "Sunny"], "prefix": ["Mrs."},\n          {"use": '
        '"maiden", "family": "Goodwin", "given": ["Keisha", "Sunny"], "prefix": ["Mrs."]}\n'
        "        ]\n      }\n    }\n  ]\n}\n",
        Action(
            "record",
            {
                "resourceType": "Bundle",
                "id": "1",
                "type": "collection",
                "entry": [
                    {
                        "resource": {
                            "resourceType": "Patient",
                            "id": "1",
                            "name": [
                                {
                                    "use": "official",
                                    "family": "Corwin",
                                    "given": ["Keisha", "Sunny"],
                                    "prefix": ["Mrs."],
                                },
                                {
                                    "use": "maiden",
                                    "family": "Goodwin",
                                    "given": ["Keisha", "Sunny"],
                                    "prefix": ["Mrs."],
                                },
                            ],
                        }
                    }
                ],
            },
        ),
    ),
    _jr(
        "html_quotes_inside_value",
        '{\n"html": "<h3 id="aaa">Waarom meer dan 200 Technical Experts - '
        '"Passie voor techniek"?</h3>"}',
        Action(
            "record",
            {
                "html": '<h3 id="aaa">Waarom meer dan 200 Technical Experts - '
                '"Passie voor techniek"?</h3>'
            },
        ),
    ),
    _jr(
        "missing_last_value",
        '{"key": true, "key2": false, "key3": }',
        Action("record", {"key": True, "key2": False, "key3": ""}),
    ),
    _jr(
        "single_quotes_non_ascii",
        "{'test_中国人_ascii':'统一码'}",
        Action("record", {"test_中国人_ascii": "统一码"}),
    ),
]

# From tests/test_parse_string.py.
_JR_STRING = [
    _jr(
        "mixed_quotes_unquoted",
        "{'key': 'string', 'key2': false, \"key3\": null, \"key4\": unquoted}",
        Action("record", {"key": "string", "key2": False, "key3": None, "key4": "unquoted"}),
    ),
    _jr(
        "unclosed_string_and_object",
        '{"name": "John", "age": 30, "city": "New York',
        Action("record", {"name": "John", "age": 30, "city": "New York"}),
    ),
    _jr(
        "unquoted_key",
        '{"name": "John", "age": 30, city: "New York"}',
        Action("record", {"name": "John", "age": 30, "city": "New York"}),
    ),
    _jr(
        "unquoted_value_with_space",
        '{"name": "John", "age": 30, "city": New York}',
        Action("record", {"name": "John", "age": 30, "city": "New York"}),
    ),
    _jr(
        "unquoted_first_value",
        '{"name": John, "age": 30, "city": "New York"}',
        Action("record", {"name": "John", "age": 30, "city": "New York"}),
    ),
    _jr(
        "slanted_quotes",
        '{“slanted_delimiter”: "value"}',
        Action("record", {"slanted_delimiter": "value"}),
    ),
    _jr(
        "missing_close_quote_before_key",
        '{"name": "John", "age": 30, "city": "New York, "gender": "male"}',
        Action("record", {"name": "John", "age": 30, "city": "New York", "gender": "male"}),
    ),
    _jr("doubled_open_quote", '{"key": ""value"}', Action("record", {"key": "value"})),
    _jr(
        "number_key",
        '{"key": "value", 5: "value"}',
        Action("record", {"key": "value", "5": "value"}),
    ),
    _jr("escaped_quotes_unclosed", '{"foo": "\\"bar\\""', Action("record", {"foo": '"bar"'})),
    _jr("key_with_quote_unclosed", '{"" key":"val"', Action("record", {" key": "val"})),
    _jr(
        "unquoted_value_unclosed",
        '{"key": value "key2" : "value2" ',
        Action("record", {"key": "value", "key2": "value2"}),
    ),
    _jr(
        "quote_inside_value_words",
        '{"key": "lorem ipsum ... "sic " tamet. ...}',
        Action("record", {"key": 'lorem ipsum ... "sic " tamet. ...'}),
    ),
    _jr("unquoted_value_trailing_comma", '{"key": value , }', Action("record", {"key": "value"})),
    _jr(
        "quotes_inside_comment_value",
        '{"comment": "lorem, "ipsum" sic "tamet". To improve"}',
        Action("record", {"comment": 'lorem, "ipsum" sic "tamet". To improve'}),
    ),
    _jr(
        "quotes_inside_value_then_key",
        '{"key": "v"alu"e"} key:',
        Action("record", {"key": 'v"alu"e'}),
    ),
    _jr(
        "quote_inside_value_then_pair",
        '{"key": "v"alue", "key2": "value2"}',
        Action("record", {"key": 'v"alue', "key2": "value2"}),
    ),
    _jr(
        "single_quoted_unclosed_escapes",
        '{"key": \'string"\n\t\\le\'',
        Action("record", {"key": 'string"\n\t\\le'}),
    ),
    _jr("newline_in_key", '{"key_1\n": "value"}', Action("record", {"key_1": "value"})),
    _jr("tab_in_key", '{"key\t_": "value"}', Action("record", {"key\t_": "value"})),
    _jr("escaped_apostrophe", '{"key": "valu\\\'e"}', Action("record", {"key": "valu'e"})),
    _jr(
        "escaped_json_in_value",
        '{\'key\': "{\\"key\\": 1, \\"key2\\": 1}"}',
        Action("record", {"key": '{"key": 1, "key2": 1}'}),
    ),
    _jr(
        "link_quotes_inside_value",
        '{ "content": "[LINK]("https://google.com")" }',
        Action("record", {"content": '[LINK]("https://google.com")'}),
    ),
    _jr(
        "link_open_paren_value",
        '{ "content": "[LINK](" }',
        Action("record", {"content": "[LINK]("}),
    ),
    _jr("fenced_four_backticks", '````{ "key": "value" }```', Action("record", {"key": "value"})),
    _jr(
        "closing_fence_only",
        '{    "a": "",    "b": [ { "c": 1} ] \n}```',
        Action("record", {"a": "", "b": [{"c": 1}]}),
    ),
    _jr(
        "prose_then_fenced_single_quotes",
        "Based on the information extracted, here is the filled JSON output: "
        "```json { 'a': 'b' } ```",
        Action("record", {"a": "b"}),
    ),
    _jr(
        "prose_then_fence_block",
        "\n                       The next 64 elements are:\n                       ```json\n"
        '                       { "key": "value" }\n                       ```',
        Action("record", {"key": "value"}),
    ),
    _jr(
        "fenced_json_inside_value",
        '{"key": "```json {"key": [{"key1": 1},{"key2": 2}]}```"}',
        Action("record", {"key": {"key": [{"key1": 1}, {"key2": 2}]}}),
    ),
    _jr(
        "capital_literals",
        '{"key": TRUE, "key2": FALSE, "key3": Null}   ',
        Action("record", {"key": True, "key2": False, "key3": None}),
    ),
    _jr("cut_after_backslash", '{"key": "val\\', Action("record", {"key": "val\\"})),
]

# From tests/test_parse_comment.py.
_JR_COMMENT = [
    _jr(
        "block_comment_before", '/* comment */ {"key": "value"}', Action("record", {"key": "value"})
    ),
    _jr(
        "line_comment_inside",
        '{ "key": { "key2": "value2" // comment }, "key3": "value3" }',
        Action("record", {"key": {"key2": "value2"}}),
    ),
    _jr(
        "hash_comment_inside",
        '{ "key": { "key2": "value2" # comment }, "key3": "value3" }',
        Action("record", {"key": {"key2": "value2"}, "key3": "value3"}),
    ),
    _jr(
        "block_comment_inside",
        '{ "key": { "key2": "value2" /* comment */ }, "key3": "value3" }',
        Action("record", {"key": {"key2": "value2"}, "key3": "value3"}),
    ),
    _jr("unclosed_comment", '{ "key": "value" /* comment', Action("record", {"key": "value"})),
]

JSON_REPAIR = _JR_OBJECT + _JR_GENERAL + _JR_STRING + _JR_COMMENT
CASES = LANGCHAIN + ISSUE + CREWAI + JSON_REPAIR

# --- where tether reads a reply otherwise, and why ---------------------------------------
_NEVER_CLOSES = (
    "the object never closes: the reply may have been cut off, and closing it would invent "
    "the end of a value"
)
_QUOTE = "an unbalanced quote inside the object: where a value, and so the object, ends is a guess"
_BRACKETS = "a bracket closed by a brace: where the array ends, and what is in it, is a guess"
_AFTER = (
    "more JSON after the object's closing brace: json_repair merges it in or drops it; which "
    "the model meant is a guess"
)
_LINES = "a bare value over several lines: the lines after the first may be prose, not the value"
_BRACED = "words in braces or brackets: an object or a list with its quotes missing, or text?"
_OPEN_QUOTE = "a bare value with an opening quote and no closing one: it may have been cut off"
_NONE = (
    "'Action: None' is a final answer only if the Thought is taken for one; tether asks the "
    "model for its Final Answer"
)
_OBSERVED = (
    "an imagined Observation ends the reply: tether runs the one call before it and drops the "
    "imagined result and answer; the peer refuses the whole reply"
)

STRICTER: dict[str, str] = {
    "lc_mrkl_code_input": _LINES,
    "issue_two_objects": (
        "two JSON objects: LangChain passes both as one string; which call was meant is a guess"
    ),
    "issue_two_actions": (
        "two Actions in one reply: LangChain takes the first (with the second as its input's "
        "tail), which may not be the one the model meant"
    ),
    "crew_curly_braces": _BRACED,
    "crew_mixed_brackets": _BRACED,
    "crew_incomplete_json": _NEVER_CLOSES,
    "crew_newlines": _LINES,
    "crew_unbalanced_quote": _OPEN_QUOTE,
    "crew_repair_unquoted_value_unclosed": _NEVER_CLOSES,
    "crew_repair_unclosed": _NEVER_CLOSES,
    "crew_action_none": _NONE,
    "crew_action_none_reason": _NONE,
    "crew_action_na": _NONE,
    "crew_action_none_alone": _NONE,
    "jr_object_open_brace_only": _NEVER_CLOSES,
    "jr_object_open_quote_only": _NEVER_CLOSES,
    "jr_object_unclosed_array": _BRACKETS,
    "jr_object_empty_key_unclosed": _NEVER_CLOSES,
    "jr_object_quote_inside_value": _QUOTE,
    "jr_object_values_missing_open_quote": _QUOTE,
    "jr_object_brace_inside_value": _QUOTE,
    "jr_object_value_missing_open_quote": _QUOTE,
    "jr_object_value_never_closes": _NEVER_CLOSES,
    "jr_object_fence_after_unclosed": _NEVER_CLOSES,
    "jr_object_key_missing_close_quote": _QUOTE,
    "jr_object_mismatched_bracket": _BRACKETS,
    "jr_merge_key_after_brace": _AFTER,
    "jr_merge_empty_array_after": _AFTER,
    "jr_merge_empty_object_after": _AFTER,
    "jr_merge_two_keys_after_brace": _AFTER,
    "jr_unclosed_after_empty_value": _NEVER_CLOSES,
    "jr_stray_closing_brace": _AFTER,
    "jr_prefixed_unclosed": _NEVER_CLOSES,
    "jr_bundle_unclosed_array": _BRACKETS,
    "jr_unclosed_string_and_object": _NEVER_CLOSES,
    "jr_missing_close_quote_before_key": _QUOTE,
    "jr_doubled_open_quote": _QUOTE,
    "jr_escaped_quotes_unclosed": _NEVER_CLOSES,
    "jr_key_with_quote_unclosed": _NEVER_CLOSES,
    "jr_unquoted_value_unclosed": _NEVER_CLOSES,
    "jr_quote_inside_value_words": _QUOTE,
    "jr_quote_inside_value_then_pair": _QUOTE,
    "jr_single_quoted_unclosed_escapes": _NEVER_CLOSES,
    "jr_cut_after_backslash": _NEVER_CLOSES,
    "jr_unclosed_comment": _NEVER_CLOSES,
}
"""The peer reads the reply; tether gives the model the format note instead."""

LENIENT: dict[str, str] = {
    "lc_mrkl_action_observation_answer": _OBSERVED,
    "crew_fabricated_observation": _OBSERVED,
    "issue_call_syntax": (
        "call syntax names one offered tool and its arguments; LangChain needs an Action Input"
    ),
}
"""tether reads the reply; the peer refuses it."""

DIFFERENT: dict[str, str] = {
    "lc_mrkl_sql_query": (
        "LangChain strips quotes from both ends of an input, so the query loses its closing "
        "quote; tether keeps the value as written"
    ),
    "issue_json_then_prose": (
        "LangChain passes the object and the prose after it as one string; tether reads the object"
    ),
    "jr_valid_wide_integer": (
        "an integer wider than 64 bits becomes a marked string, so the proposal can be "
        "checkpointed (and the tool's schema refuses it)"
    ),
}
"""Both read the reply, differently."""

COUNTS: dict[str, dict[str, int]] = {
    "langchain": {"agree": 20, "stricter": 3, "lenient": 2, "different": 2},
    "crewai": {"agree": 29, "stricter": 11, "lenient": 1},
    "json_repair": {"agree": 64, "stricter": 31, "different": 1},
}
"""Per peer, how many cases tether agrees on, and how many it reads otherwise (the README's
table of parser cases shows the same figures)."""
