/**
 * matchmaker's TypeScript client: `MatchmakerClient` for the HTTP API and
 * `Session` for the player's events, with the API's types.
 */
export { MatchmakerClient, type ClientOptions, type TokenProvider } from "./client.js";
export { Session, type SessionOptions, type WebSocketConstructor, type WebSocketLike } from "./session.js";
export * from "./errors.js";
export type * from "./types.js";
export type { components, paths } from "./openapi.js";
