// Errors the local SFU answers with, in Cloudflare Realtime's shape: an HTTP status and a JSON
// body `{errorCode, errorDescription}` (Realtime's OpenAPI schema and its error-code reference).
// The description always says what to do next. The statuses Cloudflare documents are used where
// it documents one (401 unauthorized, 406 invalid_params, 410/425 session_error, 400
// decoding_error); where it only names the code, the status is the closest HTTP one (README.md).

export const STATUS = {
  decoding_error: 400,
  unauthorized: 401,
  not_found: 404,
  invalid_params: 406,
  invalid_session_description: 406,
  session_error: 410,
  payload_too_large: 413,
  internal_error: 500,
  temporarily_unavailable_error: 503,
};

/** An API error as a value: thrown inside the request handler only, answered by it. */
export class ApiError extends Error {
  constructor(errorCode, errorDescription, status = STATUS[errorCode] ?? 500) {
    super(errorDescription);
    this.errorCode = errorCode;
    this.status = status;
  }
  get body() {
    return { errorCode: this.errorCode, errorDescription: this.message };
  }
}

export const fail = (code, description, status) => {
  throw new ApiError(code, description, status);
};
