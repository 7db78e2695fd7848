/**
 * The receipt as the customer reads it, independent of where the order came from (a print
 * instruction with create parameters, or an order record from the query API) and of the printer.
 * Amounts are integer cents; texts are sanitized; every block is optional and printed only when
 * its data is there.
 */

export interface ReceiptOptionItem {
  name: string;
  /** Price of the option item in cents, or null when none is given. */
  price: number | null;
}

export interface ReceiptOption {
  name: string | null;
  items: ReceiptOptionItem[];
}

export interface ReceiptItem {
  name: string;
  quantity: number;
  /** Unit price in cents, options included. */
  unitPrice: number;
  lineTotal: number;
  options: ReceiptOption[];
  /** The record's SKU code (`skuNo`), for the kitchen; null when unknown (create parameters). */
  sku: string | null;
}

/** A fee or adjustment line. `inTotal` false marks information the customer does not pay. */
export interface ReceiptAmount {
  label: string;
  /** Cents; discounts are negative. */
  amount: number;
  inTotal: boolean;
}

export interface ReceiptDiscount {
  label: string;
  amount: number;
  discounterName: string | null;
  /** Card number with all but the last 4 characters masked. */
  cardNo: string | null;
  validity: string | null;
}

export interface ReceiptPayment {
  way: string | null;
  channel: string | null;
  status: string | null;
  transactionId: string | null;
  merchantOrderNo: string | null;
  platform: string | null;
  transactionCreated: string | null;
  transactionClosed: string | null;
}

export interface ReceiptTakeout {
  userName: string | null;
  userPhone: string | null;
  userAddress: string | null;
}

export interface ReceiptMarkings {
  reprint?: { count: number; originalTime: string };
  possibleDuplicate?: boolean;
  late?: boolean;
  /**
   * Late by the order's own time (print-protocol v1.2 §10): when it was placed (`yyyy-MM-dd
   * HH:mm`, service time) and how long ago (`3 days ago`). Comes with `late`.
   */
  lateOrder?: { placed: string; ago: string };
}

export interface Receipt {
  source: 'instruction' | 'record';
  orderNo: string;
  /** Order type banner: `TABLE ORDER`, `QUEUE ORDER`, `TAKEOUT`; null when unknown (records). */
  banner: string | null;
  pickUpNo: string | null;
  takeoutNo: string | null;
  /** Further reference lines (receipt number, serial number, guests), label and value. */
  references: Array<{ label: string; value: string }>;
  createTime: string | null;
  paymentTime: string | null;
  items: ReceiptItem[];
  subtotal: number;
  adjustments: ReceiptAmount[];
  discount: ReceiptDiscount | null;
  /** What the customer owes: as given by the service, else computed from the lines. */
  total: number;
  amountPaid: number | null;
  payment: ReceiptPayment;
  takeout: ReceiptTakeout | null;
  customContent: string | null;
  remark: string | null;
  /** Problems found while building the model (amounts that do not add up, removed controls). */
  warnings: string[];
}

/** `************1234`: only the last four characters stay readable. */
export function maskCardNo(cardNo: string): string {
  const chars = [...cardNo];
  if (chars.length <= 4) return '*'.repeat(chars.length);
  return '*'.repeat(chars.length - 4) + chars.slice(-4).join('');
}
