"""A synchronous httpx transport that serves requests from an ASGI app in this process.

httpx's ``ASGITransport`` is async-only, and the tools use a sync ``httpx.Client``. This
transport runs the app on its own event loop in a background thread and waits for each
response with the request's read timeout, raising ``httpx.ReadTimeout`` like a real socket
would. As with a real server, a request the client gave up on keeps running to completion, so
"the charge was recorded but the client timed out" happens here exactly as over the network.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import httpx
from starlette.types import ASGIApp


class InProcessTransport(httpx.BaseTransport):
    """Serve ``app`` without sockets; thread-safe, closed with :meth:`close`."""

    def __init__(self, app: ASGIApp) -> None:
        self._asgi = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="world-payments-loop", daemon=True
        )
        self._thread.start()
        self._closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.ConnectError("the in-process payment service is closed", request=request)
        body = request.read()
        inner = httpx.Request(
            request.method,
            request.url,
            headers=request.headers,
            content=body,
            extensions=request.extensions,
        )
        future = asyncio.run_coroutine_threadsafe(self._send(inner), self._loop)
        timeout = request.extensions.get("timeout", {}).get("read")
        try:
            status, headers, content = future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise httpx.ReadTimeout(
                f"no response within {timeout}s from the payment service", request=request
            ) from None
        return httpx.Response(status, headers=headers, content=content, request=request)

    async def _send(self, request: httpx.Request) -> tuple[int, httpx.Headers, bytes]:
        response = await self._asgi.handle_async_request(request)
        content = await response.aread()
        return response.status_code, response.headers, content

    def close(self) -> None:
        """Cancel requests still running and stop the loop thread."""
        if self._closed:
            return
        self._closed = True
        asyncio.run_coroutine_threadsafe(_cancel_pending(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()


async def _cancel_pending() -> None:
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
