package dev.trellis.studio.internal

import io.ktor.http.HttpStatusCode

/** A request the API refuses: the HTTP [status] and a [message] that says what was wrong and what to do. */
internal class ApiException(val status: HttpStatusCode, message: String) : RuntimeException(message)

internal fun notFound(message: String): Nothing = throw ApiException(HttpStatusCode.NotFound, message)

internal fun badRequest(message: String): Nothing = throw ApiException(HttpStatusCode.BadRequest, message)

internal fun conflict(message: String): Nothing = throw ApiException(HttpStatusCode.Conflict, message)
