import { randomBytes } from 'node:crypto';
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  RELATED_TASK_META_KEY,
  type JSONRPCErrorResponse,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import type { ElicitationParams } from './task-views.js';

/**
 * The 2025-11-25 side channel's own requests (`elicitation/create` sent on a `tasks/result`
 * stream) carry their task and input request in their JSON-RPC id, so the client's answer,
 * posted to whichever replica, says by itself which task it answers: no replica has to remember
 * the request it sent.
 */
const PREFIX = 'longrun-input:';
const ID = /^longrun-input:([0-9a-f-]{36}):(input-[0-9a-z]{1,12}):[A-Za-z0-9_-]{1,16}$/;

export interface SideChannelId {
  taskId: string;
  /** The input request it asked (see `inputKeyOf`). */
  inputKey: string;
}

/** A client's answer to one of our side-channel requests. */
export type SideChannelAnswer = JSONRPCResultResponse | JSONRPCErrorResponse;

/** The `elicitation/create` request for a task's open input request (`note` appended). */
export function elicitationRequest(
  taskId: string,
  inputKey: string,
  params: ElicitationParams,
  note?: string,
): JSONRPCRequest {
  return {
    jsonrpc: '2.0',
    id: `${PREFIX}${taskId}:${inputKey}:${randomBytes(6).toString('base64url')}`,
    method: 'elicitation/create',
    params: {
      ...params,
      message: note ? `${params.message}\n\n${note}` : params.message,
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    },
  };
}

/** Whether a posted message is a client's answer to one of our side-channel requests. */
export function isSideChannelAnswer(message: unknown): message is SideChannelAnswer {
  if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return false;
  return typeof message.id === 'string' && message.id.startsWith(PREFIX);
}

/** The task and input request an answer's id names, or null for an id we did not make. */
export function readSideChannelId(id: unknown): SideChannelId | null {
  if (typeof id !== 'string') return null;
  const match = ID.exec(id);
  return match ? { taskId: match[1] as string, inputKey: match[2] as string } : null;
}
