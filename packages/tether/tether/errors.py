"""Exceptions tether raises or asks tools to raise."""


class TetherError(Exception):
    """Base class for errors raised by tether itself."""


class SettingsError(TetherError, ValueError):
    """Settings or run context that cannot be used; raised before any model call."""


class TaskError(TetherError, ValueError):
    """The run's input is unusable (for example an empty task)."""


class TransientToolError(Exception):
    """Raised by a tool for a failure worth retrying in place (timeouts, rate limits, 5xx)."""


class ScriptExhaustedError(TetherError, RuntimeError):
    """A ScriptedChatModel was called more times than it has scripted replies."""


class ModelServerError(TetherError, RuntimeError):
    """The local model server could not be started or used (missing or bad GGUF, no health)."""


class ModelCallError(TetherError, RuntimeError):
    """The model endpoint could not be reached or answered with an error."""
