import { isApiException } from '../support/client-node-full.js';

/** A Kubernetes Status, as the API server answers a failed call. */
export interface ApiStatus {
  kind: string;
  status: string;
  message: string;
  reason: string;
  code: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: Array<{ field: string; reason: string; message: string }>;
  };
}

/** The Status of a failed call; fails the test if the call succeeded or failed otherwise. */
export async function apiError(promise: Promise<unknown>, code: number): Promise<ApiStatus> {
  try {
    await promise;
  } catch (err) {
    if (isApiException(err) && err.code === code) {
      return JSON.parse(err.body as string) as ApiStatus;
    }
    throw err;
  }
  throw new Error(`expected HTTP ${code}, the call succeeded`);
}
