// ES module entry: the same functions as index.js.
import api from './index.js';

export const {
  DecisionError, check, explain, frame, evaluate, verifyRecord, verifyLog, outcomes, digests, engineInfo, version,
} = api;
export default api;
