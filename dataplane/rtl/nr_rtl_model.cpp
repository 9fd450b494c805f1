// SPDX-License-Identifier: BSD-3-Clause
/*
 * nr_rtl.h on the Verilated nr_agg_top: the only C++ in the tree, behind an
 * extern "C" API.  Every call takes the model's mutex; the clock only runs
 * inside calls.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "Vnr_agg_top.h"
#include "verilated.h"

#include "nr_rtl.h"

namespace {

/* Bounds that turn a hung model into an error instead of a hung test. */
constexpr uint64_t AXI_CYCLES = 1000;
constexpr uint64_t FRAME_CYCLES = 50000000;
constexpr uint32_t FRAME_MAX = 16384;

struct out_frame {
	std::vector<uint8_t> bytes;
	uint8_t port, kind;
};

} // namespace

struct nr_rtl {
	VerilatedContext ctx;
	Vnr_agg_top *m = nullptr;
	std::mutex lock;
	std::deque<out_frame> out;
	out_frame cur;
	uint64_t cycles = 0;
	std::string err;

	/* One clock: inputs set by the caller before, outputs sampled after. */
	void step()
	{
		m->clk = 0;
		m->eval();
		/* sample the transmit handshake at the rising edge */
		if (m->tx_tvalid && m->tx_tready) {
			for (int k = 0; k < 4; k++)
				if (m->tx_tkeep >> k & 1)
					cur.bytes.push_back((uint8_t)(m->tx_tdata >> (8 * k)));
			cur.port = (uint8_t)(m->tx_tuser & 0xff);
			cur.kind = (uint8_t)((m->tx_tuser >> 8) & 3);
			if (m->tx_tlast) {
				out.push_back(std::move(cur));
				cur = out_frame();
			}
		}
		m->clk = 1;
		m->eval();
		cycles++;
	}

	uint32_t read32(uint32_t off)
	{
		uint64_t n = 0;

		m->s_axil_araddr = off & 0x1ffff;
		m->s_axil_arvalid = 1;
		m->s_axil_rready = 1;
		for (;;) {
			bool done = m->s_axil_rvalid;
			uint32_t v = m->s_axil_rdata;

			if (done) {
				step();      /* the handshake */
				m->s_axil_arvalid = 0;
				m->s_axil_rready = 0;
				step();
				return v;
			}
			step();
			m->s_axil_arvalid = m->s_axil_rvalid ? 0 : m->s_axil_arvalid;
			if (++n > AXI_CYCLES) {
				err = "rtl: AXI-Lite read of 0x" + std::to_string(off) + " not answered";
				m->s_axil_arvalid = 0;
				return 0xffffffffu;
			}
		}
	}

	void write32(uint32_t off, uint32_t val)
	{
		uint64_t n = 0;

		m->s_axil_awaddr = off & 0x1ffff;
		m->s_axil_awvalid = 1;
		m->s_axil_wdata = val;
		m->s_axil_wstrb = 0xf;
		m->s_axil_wvalid = 1;
		m->s_axil_bready = 1;
		while (!m->s_axil_bvalid) {
			step();
			if (m->s_axil_awready) {
				m->s_axil_awvalid = 0;
				m->s_axil_wvalid = 0;
			}
			if (++n > AXI_CYCLES) {
				err = "rtl: AXI-Lite write of 0x" + std::to_string(off) + " not answered";
				break;
			}
		}
		m->s_axil_awvalid = 0;
		m->s_axil_wvalid = 0;
		step();
		m->s_axil_bready = 0;
		/* a command or a reset runs to its end before the write returns,
		 * as a device with a fast clock would from the driver's view */
		settle();
	}

	/* Run until the datapath holds no frame and sends none. */
	bool settle()
	{
		uint64_t n = 0;

		step();
		step();
		while (!m->idle || m->tx_tvalid) {
			step();
			if (++n > FRAME_CYCLES) {
				err = "rtl: the model did not settle within " + std::to_string(FRAME_CYCLES) +
				      " cycles (a hang in the datapath)";
				return false;
			}
		}
		return true;
	}

	int send(uint8_t port, const uint8_t *f, uint32_t len)
	{
		uint32_t off = 0;
		uint64_t n = 0;

		if (len == 0 || len > FRAME_MAX)
			return -EINVAL;
		while (off < len) {
			uint32_t w = 0, k;
			uint8_t keep = 0;

			for (k = 0; k < 4 && off + k < len; k++) {
				w |= (uint32_t)f[off + k] << (8 * k);
				keep |= (uint8_t)(1u << k);
			}
			m->rx_tdata = w;
			m->rx_tkeep = keep;
			m->rx_tlast = off + k >= len;
			m->rx_tuser = port;
			m->rx_tvalid = 1;
			m->eval();
			while (!m->rx_tready) {
				step();
				if (++n > FRAME_CYCLES) {
					m->rx_tvalid = 0;
					err = "rtl: the model did not take a frame (rx_tready low; is the "
					      "device enabled? CTRL.ENABLE)";
					return -EIO;
				}
			}
			step();
			off += k;
		}
		m->rx_tvalid = 0;
		m->rx_tlast = 0;
		return settle() ? 0 : -EIO;
	}
};

extern "C" {

struct nr_rtl *nr_rtl_create(char *err, unsigned errlen)
{
	nr_rtl *r = new (std::nothrow) nr_rtl();

	if (!r) {
		snprintf(err, errlen, "rtl: out of memory");
		return nullptr;
	}
	r->m = new (std::nothrow) Vnr_agg_top(&r->ctx);
	if (!r->m) {
		snprintf(err, errlen, "rtl: out of memory for the model");
		delete r;
		return nullptr;
	}
	r->m->tx_tready = 1;
	r->m->rst = 1;
	for (int i = 0; i < 4; i++)
		r->step();
	r->m->rst = 0;
	r->step();
	return r;
}

void nr_rtl_destroy(struct nr_rtl *r)
{
	if (!r)
		return;
	r->m->final();
	delete r->m;
	delete r;
}

uint32_t nr_rtl_read32(struct nr_rtl *r, uint32_t off)
{
	std::lock_guard<std::mutex> g(r->lock);
	return r->read32(off);
}

void nr_rtl_write32(struct nr_rtl *r, uint32_t off, uint32_t val)
{
	std::lock_guard<std::mutex> g(r->lock);
	r->write32(off, val);
}

uint32_t nr_rtl_io_read32(void *r, uint32_t off)
{
	return nr_rtl_read32(static_cast<nr_rtl *>(r), off);
}

void nr_rtl_io_write32(void *r, uint32_t off, uint32_t val)
{
	nr_rtl_write32(static_cast<nr_rtl *>(r), off, val);
}

int nr_rtl_send(struct nr_rtl *r, uint8_t port, const uint8_t *frame, uint32_t len)
{
	std::lock_guard<std::mutex> g(r->lock);
	return r->send(port, frame, len);
}

int nr_rtl_recv(struct nr_rtl *r, uint8_t *buf, uint32_t cap, uint32_t *len, uint8_t *port,
		uint8_t *kind)
{
	std::lock_guard<std::mutex> g(r->lock);

	if (r->out.empty())
		return 0;
	out_frame &f = r->out.front();
	*len = (uint32_t)f.bytes.size();
	memcpy(buf, f.bytes.data(), f.bytes.size() < cap ? f.bytes.size() : cap);
	*port = f.port;
	*kind = f.kind;
	r->out.pop_front();
	return 1;
}

unsigned nr_rtl_pending(struct nr_rtl *r)
{
	std::lock_guard<std::mutex> g(r->lock);
	return (unsigned)r->out.size();
}

void nr_rtl_tick_ms(struct nr_rtl *r, unsigned ms)
{
	std::lock_guard<std::mutex> g(r->lock);

	for (unsigned i = 0; i < ms; i++) {
		r->m->tick_ms = 1;
		r->step();
		r->m->tick_ms = 0;
		r->step();
	}
	r->settle();
}

uint64_t nr_rtl_cycles(struct nr_rtl *r)
{
	std::lock_guard<std::mutex> g(r->lock);
	return r->cycles;
}

const char *nr_rtl_error(struct nr_rtl *r)
{
	return r->err.c_str();
}

} // extern "C"
