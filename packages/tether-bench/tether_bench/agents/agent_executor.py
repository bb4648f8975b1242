"""The seed's baseline: langchain-classic's AgentExecutor over create_react_agent.

The standard ReAct prompt (written here, not downloaded from a hub); the tools are the
registry's, rendered with their argument schemas; the Action Input string is decoded with
``json.loads`` (the usual way to give a ReAct agent multi-argument tools), and anything it
cannot decode comes back to the model as an error envelope telling it the expected format.

Two variants, the same harness (step cap as ``max_iterations``, the harness's token-budget
guard and in-place retry of transient tool failures, since AgentExecutor has neither):
``agent_executor`` as its docs recommend, with ``handle_parsing_errors=True`` (a reply it
cannot parse goes back to the model as an observation), and ``agent_executor_stock`` with the
default ``False`` (such a reply ends the run with an error).

AgentExecutor has no approval gate; both variants get the operator's gate around their write
tools (:mod:`tether_bench.agents.lc_tools`), as every agent runs with gates on.
"""

from __future__ import annotations

from langchain_classic.agents import AgentExecutor, create_react_agent
from langchain_core.prompts import PromptTemplate
from langchain_core.tools.render import render_text_description_and_args
from langchain_openai import ChatOpenAI

from tether_bench.agents.base import BenchAgent, ChatSettings, Say, Sleep
from tether_bench.agents.lc_tools import registry_tools
from tether_bench.gates import ApprovalDesk
from tether_bench.harness import Harness, VariantSettings
from tether_bench.instrument import RecordingRegistry
from tether_bench.records import Outcome
from tether_bench.scenarios import Scenario

STOPPED = "Agent stopped due to iteration limit or time limit."

REACT_PROMPT = """Answer the following questions as best you can. You have access to the following tools:

{tools}

Use the following format:

Question: the input question you must answer
Thought: you should always think about what to do
Action: the action to take, should be one of [{tool_names}]
Action Input: the input to the action
Observation: the result of the action
... (this Thought/Action/Action Input/Observation can repeat N times)
Thought: I now know the final answer
Final Answer: the final answer to the original input question

Begin!

Question: {input}
Thought:{agent_scratchpad}"""  # noqa: E501 - the standard prompt, verbatim
"""The standard ReAct prompt (hwchase17/react on the LangChain hub), verbatim."""


HISTORY = "Previous conversation history:\n{chat_history}\n\nNew input: {input}"
"""Where a conversation's history goes: the react-chat prompt's lines (hwchase17/react-chat)."""


def react_prompt(instructions: str | None, *, chat_history: bool = False) -> PromptTemplate:
    """The standard ReAct prompt, headed by the scenario's domain policy if any (the prompt is
    AgentExecutor's whole system prompt; the policy's braces are escaped for the template);
    with ``chat_history``, the question is the new input after the conversation so far."""
    template = REACT_PROMPT.replace("Question: {input}", HISTORY) if chat_history else REACT_PROMPT
    if not instructions:
        return PromptTemplate.from_template(template)
    escaped = instructions.replace("{", "{{").replace("}", "}}")
    return PromptTemplate.from_template(f"{escaped}\n\n{template}")


class AgentExecutorAgent(BenchAgent):
    """AgentExecutor + create_react_agent; ``handle_parsing_errors`` as its docs recommend."""

    name = "agent_executor"
    guards_budget = True

    def __init__(
        self,
        *,
        harness: Harness | None = None,
        handle_parsing_errors: bool = True,
        sleep: Sleep | None = None,
    ) -> None:
        self.harness = harness or Harness()
        self.handle_parsing_errors = handle_parsing_errors
        if sleep is not None:
            self.sleep = sleep
        if not handle_parsing_errors:
            self.name = "agent_executor_stock"  # type: ignore[misc]

    @property
    def max_iterations(self) -> int:
        return self.harness.step_cap

    def settings(self) -> VariantSettings:
        h = self.harness
        return VariantSettings(
            agent=self.name,
            step_cap=self.max_iterations,
            step_cap_by="max_iterations",
            token_budget=h.token_budget,
            token_budget_by="harness guard",
            tool_attempts=h.tool_attempts,
            retry_delays_s=tuple(h.delay(a) for a in range(1, h.tool_attempts)),
            retry_by="harness, around the tools",
            output_repair="handle_parsing_errors" if self.handle_parsing_errors else "none",
            model_call_retries=f"client {h.model_client_retries}",
            tool_call_limit=None,
        )

    def open_thread(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Say:
        """One executor; a conversation's earlier messages and answers reach the prompt as
        its chat history (the react-chat prompt's wording), since AgentExecutor keeps none."""
        tools = registry_tools(
            registry,
            text_input=True,
            harness=self.harness,
            retry=True,
            sleep=self.sleep,
            desk=ApprovalDesk(scenario, registry),
        )
        agent = create_react_agent(
            model,
            tools,
            react_prompt(scenario.instructions, chat_history=bool(scenario.turns)),
            tools_renderer=render_text_description_and_args,
        )
        executor = AgentExecutor(
            agent=agent,
            tools=tools,
            handle_parsing_errors=self.handle_parsing_errors,
            max_iterations=self.max_iterations,
        )
        history: list[str] = []

        def say(message: str) -> Outcome:
            inputs = {"input": message}
            if scenario.turns:
                inputs["chat_history"] = "\n".join(history) or "(none)"
            answer = str(executor.invoke(inputs).get("output", ""))
            history.extend([f"Human: {message}", f"AI: {answer}"])
            if answer == STOPPED:
                return Outcome(
                    answer=None,
                    termination="max_steps",
                    reason=f"max_iterations={self.max_iterations} reached",
                )
            return Outcome(answer=answer, termination="completed", reason="final answer")

        return say
