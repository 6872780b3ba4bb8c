export { createDemoApp, defaultAllowedOrigins, type DemoApp, type DemoAppOptions } from './app.js';
export { startDemoServer, type DemoServer, type StartDemoServerOptions } from './server.js';
export { createNotesMcpServer, SERVER_INFO, MAX_NOTE_LENGTH } from './mcp-server.js';
export { NotesStore, type Note, type NotesRepository, type NotesStoreOptions } from './notes-store.js';
export { RedisNotesStore, type RedisNotesStoreOptions } from './redis-notes-store.js';
export { connectSharedState, type DemoSharedState } from './shared-state.js';
export { callerFrom, type Caller } from './caller.js';
export { NOTES_READ, NOTES_WRITE, TOOL_SCOPES, DEFAULT_SCOPES, SCOPES_SUPPORTED, scopesForTool, type DemoToolName } from './scopes.js';
