#!/usr/bin/env python3
"""Writes the PDF fixtures of tests/data/knowledge/ by hand (PDF 1.4, Helvetica text, exact
xref offsets), with no PDF library: several multi-page notes, one encrypted with the standard
security handler (RC4 40-bit, revision 2, user password "tidepool") and one damaged file.

    python3 tools/knowledge/make_fixture_pdfs.py [OUT_DIR]   # default tests/data/knowledge
"""
import hashlib
import os
import sys

PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def rc4(key, data):
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) & 255
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) & 255
        j = (j + s[i]) & 255
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) & 255])
    return bytes(out)


def escape(text):
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def page_stream(lines):
    ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
    for line in lines:
        ops.append("(%s) Tj T*" % escape(line))
    ops.append("ET")
    return ("\n".join(ops) + "\n").encode("latin-1")


def build_pdf(pages, title, user_password=None):
    """pages: list of lists of lines. Returns the file's bytes."""
    file_id = hashlib.md5(title.encode()).digest()
    objects = {}  # number -> bytes (without "n 0 obj")
    n_pages = len(pages)
    font_num = 3
    first_page = 4
    # 1 catalog, 2 pages, 3 font, then page/content pairs, then info (and encrypt).
    kids = " ".join("%d 0 R" % (first_page + 2 * i) for i in range(n_pages))
    objects[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[2] = ("<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n_pages)).encode()
    objects[font_num] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    streams = {}
    for i, lines in enumerate(pages):
        page_num = first_page + 2 * i
        content_num = page_num + 1
        objects[page_num] = (
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> "
            "/Contents %d 0 R >>" % (font_num, content_num)).encode()
        streams[content_num] = page_stream(lines)
    info_num = first_page + 2 * n_pages
    info_title = title.encode("latin-1")
    encrypt_num = None
    key = None
    if user_password is not None:
        encrypt_num = info_num + 1
        permissions = -44  # printing and copying not allowed; any value works for the test
        owner = (b"owner-" + user_password.encode() + PAD)[:32]
        user = (user_password.encode() + PAD)[:32]
        owner_key = hashlib.md5(owner).digest()[:5]
        o_value = rc4(owner_key, user)
        key = hashlib.md5(user + o_value + permissions.to_bytes(4, "little", signed=True) + file_id).digest()[:5]
        u_value = rc4(key, PAD)
        objects[encrypt_num] = b"<< /Filter /Standard /V 1 /R 2 /O <" + o_value.hex().encode() + b"> /U <" + \
            u_value.hex().encode() + b"> /P " + str(permissions).encode() + b" >>"

    def object_key(num):
        return hashlib.md5(key + num.to_bytes(3, "little") + (0).to_bytes(2, "little")).digest()[:10]

    for num, data in streams.items():
        if key is not None:
            data = rc4(object_key(num), data)
        objects[num] = b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"
    if key is not None:
        info_title = b"<" + rc4(object_key(info_num), info_title).hex().encode() + b">"
    else:
        info_title = b"(" + escape(title).encode("latin-1") + b")"
    objects[info_num] = b"<< /Title " + info_title + b" /Producer (Day0 fixture generator) >>"

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num]
    trailer = b"<< /Size %d /Root 1 0 R /Info %d 0 R /ID [<%s> <%s>]" % (
        size, info_num, file_id.hex().encode(), file_id.hex().encode())
    if encrypt_num:
        trailer += b" /Encrypt %d 0 R" % encrypt_num
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


LEASE = [
    ["Residential Lease Agreement - Flat 3B, 14 Harbour Lane",
     "",
     "Parties: the landlord, Marsh Properties Ltd, and the tenant, Robin Calder.",
     "Term: twelve months starting on 1 September, renewing monthly afterwards.",
     "",
     "Rent",
     "The monthly rent is 1,240 euros, due on the third working day of each month.",
     "Payment is made by bank transfer to the account named in Annex A.",
     "A late payment fee of 35 euros applies after a grace period of ten days."],
    ["Security deposit",
     "Before moving in, the tenant pays a security deposit equal to two months of rent,",
     "2,480 euros in total. The landlord keeps it in a separate escrow account.",
     "The deposit is returned within thirty days after the keys are handed back,",
     "minus documented repair costs beyond ordinary wear and tear.",
     "",
     "Utilities",
     "Water and building heating are included in the service charge.",
     "Electricity and internet are contracted by the tenant directly."],
    ["Animals",
     "Small caged animals such as fish or hamsters are always allowed.",
     "One cat or one small dog may live in the flat with written consent of the landlord,",
     "which will not be refused without a good reason. Any damage they cause is the",
     "tenant's responsibility.",
     "",
     "Ending the lease",
     "Either party may end the agreement with three months' written notice,",
     "sent by registered letter. Notice cannot take effect during the first twelve months."],
]

INSURANCE = [
    ["Bicycle Insurance Policy - Summary of Cover",
     "",
     "Policy holder: Robin Calder. Insured item: a steel touring bicycle, frame GT-4471.",
     "Insured value: 1,850 euros. Annual premium: 96 euros, paid yearly in advance.",
     "",
     "What is covered",
     "Theft of the locked bicycle anywhere in Europe, provided an approved D-lock was used.",
     "Accidental damage to the frame and wheels, including transport by train or plane."],
    ["What is not covered",
     "Wear of tyres, chains, brake pads and cables. Theft when the bicycle was left unlocked.",
     "Racing events and any use for paid courier work.",
     "",
     "Making a claim",
     "Report a theft to the police within 24 hours and keep the reference number.",
     "Then fill in the claim form online within fourteen days, attaching the police report,",
     "the original purchase receipt and photographs of the broken lock if you have it.",
     "The excess, the amount you always pay yourself, is 100 euros per claim."],
]

STATION_TALK = [
    ["Low-cost weather stations for community gardens",
     "Talk notes, regional makers meetup",
     "",
     "Why measure? Gardeners want to know about night frost before it kills seedlings,",
     "and how much rain really fell on their plot compared with the airport figures."],
    ["Hardware",
     "A Raspberry Pi Zero reads a combined temperature, humidity and pressure sensor",
     "over a serial adapter, plus a tipping-bucket rain gauge on a GPIO pin.",
     "Each bucket tip counts as 0.2 millimetres of rain.",
     "The whole station runs on a 10 watt solar panel and a small lead-acid battery."],
    ["Lessons learned",
     "Shield the sensor from direct sunlight or daytime temperatures read four degrees too high.",
     "Cheap sensors drift: compare them with a reference thermometer twice a year.",
     "Store raw readings as well as calibrated values so mistakes can be corrected later.",
     "Radio links fail in heavy rain exactly when you want the data: buffer readings locally."],
]

TAX = [
    ["Tax return checklist",
     "",
     "Documents to collect before April:",
     "- annual salary statement from the employer",
     "- receipts for work equipment above 100 euros, such as a laptop or a desk chair",
     "- bank statements showing interest earned",
     "- invoices for craftsmen who worked in the flat (labour costs are partly deductible)"],
    ["Home office",
     "Days worked from home can be claimed at a flat rate of six euros per day,",
     "up to 1,260 euros a year. Keep a calendar noting which days were spent at home.",
     "",
     "Deadlines",
     "The return is due by the end of July of the following year when filed by yourself.",
     "With a tax adviser the deadline moves to the end of February a year later."],
]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "knowledge")
    notes = os.path.join(root, "notes")
    hostile = os.path.join(root, "hostile")
    os.makedirs(notes, exist_ok=True)
    os.makedirs(hostile, exist_ok=True)
    files = {
        os.path.join(notes, "lease-agreement.pdf"): build_pdf(LEASE, "Lease agreement"),
        os.path.join(notes, "bike-insurance.pdf"): build_pdf(INSURANCE, "Bicycle insurance"),
        os.path.join(notes, "weather-station-talk.pdf"): build_pdf(STATION_TALK, "Weather station talk"),
        os.path.join(notes, "tax-checklist.pdf"): build_pdf(TAX, "Tax checklist"),
        os.path.join(hostile, "encrypted.pdf"): build_pdf(TAX, "Tax checklist", user_password="tidepool"),
    }
    whole = build_pdf(LEASE, "Lease agreement")
    files[os.path.join(hostile, "truncated.pdf")] = whole[: len(whole) * 2 // 5]
    files[os.path.join(hostile, "damaged.pdf")] = b"%PDF-1.4\n" + bytes((i * 73 + 41) % 256 for i in range(600))
    for path, data in files.items():
        with open(path, "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (os.path.relpath(path, root), len(data)))


if __name__ == "__main__":
    main()
