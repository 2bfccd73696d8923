import type { components } from './generated/openapi';

/** An RFC 9457 problem document, as every error of the API is. */
export type Problem = components['schemas']['Problem'];

/**
 * A response that is not a success: `status` (HTTP), `code` (the stable snake_case code),
 * `requestId` (quote it to support) and the whole `problem` document. A response that carries no
 * problem document (a proxy's own page, say) gets the code `http_<status>`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly problem: Problem | null;

  constructor(status: number, problem: Problem | null, text = '') {
    super(
      problem
        ? `${problem.code}: ${problem.detail}`
        : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    );
    this.name = 'ApiError';
    this.status = status;
    this.code = problem?.code ?? `http_${status}`;
    this.requestId = problem?.request_id ?? null;
    this.problem = problem;
  }

  /** The error a response stands for (its body read as a problem document when it is one). */
  static async from(response: Response): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    let problem: Problem | null = null;
    try {
      const parsed = JSON.parse(text) as Partial<Problem>;
      if (parsed && typeof parsed.code === 'string') problem = parsed as Problem;
    } catch {
      // Not JSON: no problem document.
    }
    return new ApiError(response.status, problem, problem ? '' : text);
  }
}
