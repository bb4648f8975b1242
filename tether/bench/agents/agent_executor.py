"""The seed's baseline: langchain-classic's AgentExecutor over create_react_agent.

Set up as the seed describes it: the standard ReAct prompt (written here, not downloaded
from a hub), ``handle_parsing_errors=True`` and ``max_iterations=5``. The tools are the
registry's, rendered with their argument schemas; the Action Input string is decoded with
``json.loads`` (the usual way to give a ReAct agent multi-argument tools), and anything it
cannot decode comes back to the model as an error envelope telling it the expected format.
"""

from __future__ import annotations

from langchain_classic.agents import AgentExecutor, create_react_agent
from langchain_core.prompts import PromptTemplate
from langchain_core.tools.render import render_text_description_and_args
from langchain_openai import ChatOpenAI

from tether.bench.agents.base import BenchAgent, ChatSettings
from tether.bench.agents.lc_tools import registry_tools
from tether.bench.instrument import RecordingRegistry
from tether.bench.records import Outcome
from tether.bench.scenarios import Scenario

MAX_ITERATIONS = 5
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


class AgentExecutorAgent(BenchAgent):
    """AgentExecutor + create_react_agent, handle_parsing_errors=True, max_iterations=5."""

    name = "agent_executor"

    def __init__(self, *, max_iterations: int = MAX_ITERATIONS) -> None:
        self.max_iterations = max_iterations

    def execute(
        self,
        scenario: Scenario,
        registry: RecordingRegistry,
        model: ChatOpenAI,
        chat: ChatSettings,
    ) -> Outcome:
        tools = registry_tools(registry, text_input=True)
        agent = create_react_agent(
            model,
            tools,
            PromptTemplate.from_template(REACT_PROMPT),
            tools_renderer=render_text_description_and_args,
        )
        executor = AgentExecutor(
            agent=agent,
            tools=tools,
            handle_parsing_errors=True,
            max_iterations=self.max_iterations,
        )
        result = executor.invoke({"input": scenario.task})
        answer = str(result.get("output", ""))
        if answer == STOPPED:
            return Outcome(
                answer=None,
                termination="max_steps",
                reason=f"max_iterations={self.max_iterations} reached",
            )
        return Outcome(answer=answer, termination="completed", reason="final answer")
