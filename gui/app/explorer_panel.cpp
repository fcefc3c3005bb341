// The explorer's side panel (see explorer_panel.h).
#include "gui/app/explorer_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QHeaderView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "gui/app/qt_colour.h"
#include "sim/core/problem_fields.h"
#include "sim/support/error.h"
#include "gui/viewer_core/time_axis.h"

namespace zb::view {

namespace {

constexpr int kSliderSteps = 400;
constexpr int kOverlapSteps = 100;  // the overlap slider moves in steps of 0.01

// The help text of a problem field, as zbsim's --help prints it (sim/core/problem_fields.h).
QString field_help(std::string_view key) {
  for (const ProblemField& field : problem_fields()) {
    if (field.key == key) return QString::fromUtf8(field.help.data(), static_cast<qsizetype>(field.help.size()));
  }
  return {};
}

// A spin box and a slider that drive each other.
QWidget* pair_widget(QWidget* spin, QSlider* slider) {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(spin);
  layout->addWidget(slider, 1);
  return row;
}

void link_int(QSpinBox* spin, QSlider* slider) {
  QObject::connect(slider, &QSlider::valueChanged, spin, [spin](int v) { spin->setValue(v); });
  QObject::connect(spin, qOverload<int>(&QSpinBox::valueChanged), slider, [slider](int v) {
    const QSignalBlocker block(slider);
    slider->setValue(v);
  });
}

}  // namespace

ExplorerPanel::ExplorerPanel(const std::vector<std::string>& schedule_names, const std::vector<std::string>& engines,
                             QWidget* parent)
    : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->addWidget(problem_group());
  outer->addWidget(device_costs_group());
  outer->addWidget(preset_group());
  outer->addWidget(schedules_group(schedule_names, engines));
  outer->addStretch(1);

  ProblemSpec initial;
  initial.devices = 4;
  initial.microbatches = 8;
  initial.t_f = initial.t_b = initial.t_w = {1.0};
  set_spec(initial);
}

QGroupBox* ExplorerPanel::problem_group() {
  auto* shape = new QGroupBox("Problem");
  auto* form = new QFormLayout(shape);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  add_shape_rows(form);
  costs_.reserve(5);
  add_cost(form, "t_f", "forward time per device (split over its chunks)", &ProblemSpec::t_f);
  add_cost(form, "t_b", "input-gradient backward time per device", &ProblemSpec::t_b);
  add_cost(form, "t_w", "weight-gradient backward time per device", &ProblemSpec::t_w);
  add_cost(form, "t_comm", "transfer time between neighbouring devices", &ProblemSpec::t_comm);
  // The overlapped F&B pair (DualPipe's): the MoE all-to-all each pass waits for, and how much of a
  // pair's two computations run at once. Tooltips are the problem fields' own help (as zbsim --help).
  add_cost(form, "t_a2a", field_help("t_a2a"), &ProblemSpec::t_a2a);
  add_overlap_row(form);
  // What a cluster run sends per microbatch and stage boundary; 0 leaves transfers at link latency
  // (the window warns, as zbsim simulate does).
  bytes_act_ = new QDoubleSpinBox;
  bytes_act_->setObjectName("bytes_act");
  bytes_act_->setRange(0, 1e15);
  bytes_act_->setDecimals(0);
  bytes_act_->setSingleStep(1 << 20);
  bytes_act_->setSuffix(" B");
  bytes_act_->setToolTip(field_help("bytes_act"));
  connect(bytes_act_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double value) {
    spec_.bytes_act = value;
    if (model_choice()) explicit_fields_.insert("bytes_act");
    emit changed();
  });
  form->addRow("bytes per activation", bytes_act_);

  limit_ = new QLineEdit;
  limit_->setObjectName("mem_limit");
  limit_->setPlaceholderText("none (e.g. 2p or 12)");
  limit_->setToolTip("activation memory limit: a number, or a multiple of p x M_B written like 1p, 2p");
  connect(limit_, &QLineEdit::editingFinished, this, [this] { limit_edited(); });
  form->addRow("memory limit", limit_);
  return shape;
}

void ExplorerPanel::add_shape_rows(QFormLayout* form) {
  p_ = new QSpinBox;
  p_->setObjectName("p");
  p_->setRange(1, 128);
  p_slider_ = new QSlider(Qt::Horizontal);
  p_slider_->setObjectName("p_slider");
  p_slider_->setRange(1, 32);
  link_int(p_, p_slider_);
  form->addRow("devices p", pair_widget(p_, p_slider_));

  m_ = new QSpinBox;
  m_->setObjectName("m");
  m_->setRange(1, 4096);
  m_slider_ = new QSlider(Qt::Horizontal);
  m_slider_->setObjectName("m_slider");
  m_slider_->setRange(1, 128);
  link_int(m_, m_slider_);
  form->addRow("microbatches m", pair_widget(m_, m_slider_));

  chunks_ = new QSpinBox;
  chunks_->setObjectName("chunks");
  chunks_->setRange(1, 8);
  chunks_->setToolTip("stages per device (v); 1f1b-i needs v >= 2");
  placement_ = new QComboBox;
  placement_->setObjectName("placement");
  placement_->addItems({"auto", "linear", "interleaved", "vshape"});
  placement_->setToolTip("how a device's chunks map to stages (auto: linear for v = 1, interleaved otherwise)");
  auto* chunk_row = new QWidget;
  auto* chunk_layout = new QHBoxLayout(chunk_row);
  chunk_layout->setContentsMargins(0, 0, 0, 0);
  chunk_layout->addWidget(chunks_);
  chunk_layout->addWidget(placement_, 1);
  form->addRow("chunks v", chunk_row);

  for (QSpinBox* spin : {p_, m_, chunks_}) {
    connect(spin, qOverload<int>(&QSpinBox::valueChanged), this, [this] { shape_edited(); });
  }
  connect(placement_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { shape_edited(); });
}

void ExplorerPanel::add_overlap_row(QFormLayout* form) {
  overlap_ = new QDoubleSpinBox;
  overlap_->setObjectName("overlap");
  overlap_->setRange(0, 1);
  overlap_->setDecimals(2);
  overlap_->setSingleStep(0.05);
  overlap_->setToolTip(field_help("overlap"));
  overlap_slider_ = new QSlider(Qt::Horizontal);
  overlap_slider_->setObjectName("overlap_slider");
  overlap_slider_->setRange(0, kOverlapSteps);
  connect(overlap_slider_, &QSlider::valueChanged, this,
          [this](int step) { overlap_->setValue(static_cast<double>(step) / kOverlapSteps); });
  connect(overlap_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double value) {
    spec_.overlap = value;
    const QSignalBlocker block(overlap_slider_);
    overlap_slider_->setValue(static_cast<int>(std::lround(value * kOverlapSteps)));
    emit changed();
  });
  auto* overlap_label = new QLabel("overlap");
  overlap_label->setToolTip(field_help("overlap"));
  form->addRow(overlap_label, pair_widget(overlap_, overlap_slider_));
}

QGroupBox* ExplorerPanel::device_costs_group() {
  auto* per_device = new QGroupBox("Per-device costs");
  per_device->setToolTip("edit a cell to give one device its own cost (the spin boxes above set all devices); "
                         "with v chunks a device's cost is split evenly over its chunks");
  auto* per_device_layout = new QVBoxLayout(per_device);
  device_costs_ = new QTableWidget(0, 3);
  device_costs_->setObjectName("per_device_costs");
  device_costs_->setHorizontalHeaderLabels({"t_f", "t_b", "t_w"});
  device_costs_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  device_costs_->verticalHeader()->setDefaultSectionSize(20);
  device_costs_->setMaximumHeight(150);
  connect(device_costs_, &QTableWidget::cellChanged, this,
          [this](int row, int column) { device_cell_edited(row, column); });
  per_device_layout->addWidget(device_costs_);
  return per_device;
}

QGroupBox* ExplorerPanel::preset_group() {
  auto* preset = new QGroupBox("Model preset (models/)");
  preset->setToolTip("derive t_f, t_b, t_w, t_comm, memory and the limit from a transformer on a GPU; they are "
                     "derived again when p, chunks or the placement change; a cost you edit keeps your value");
  auto* preset_form = new QFormLayout(preset);
  model_ = new QComboBox;
  model_->setObjectName("model");
  model_->addItem("none (costs from the boxes above)");
  for (const std::string& name : model_preset_names("transformers")) model_->addItem(qstr(name));
  hardware_ = new QComboBox;
  hardware_->setObjectName("hardware");
  for (const std::string& name : model_preset_names("hardware")) hardware_->addItem(qstr(name));
  microbatch_size_ = new QSpinBox;
  microbatch_size_->setObjectName("microbatch_size");
  microbatch_size_->setRange(1, 256);
  preset_form->addRow("model", model_);
  preset_form->addRow("hardware", hardware_);
  preset_form->addRow("microbatch size", microbatch_size_);
  auto model_changed = [this] {
    explicit_fields_.clear();
    const bool active = model_->currentIndex() > 0;
    hardware_->setEnabled(active);
    microbatch_size_->setEnabled(active);
    emit changed();
  };
  connect(model_, qOverload<int>(&QComboBox::currentIndexChanged), this, model_changed);
  connect(hardware_, qOverload<int>(&QComboBox::currentIndexChanged), this, model_changed);
  connect(microbatch_size_, qOverload<int>(&QSpinBox::valueChanged), this, [this] { emit changed(); });
  hardware_->setEnabled(false);
  microbatch_size_->setEnabled(false);
  return preset;
}

QGroupBox* ExplorerPanel::schedules_group(const std::vector<std::string>& schedule_names,
                                          const std::vector<std::string>& engines) {
  auto* chosen = new QGroupBox("Schedules");
  auto* list_layout = new QVBoxLayout(chosen);
  schedules_ = new QListWidget;
  schedules_->setObjectName("schedules");
  for (const std::string& name : schedule_names) {
    auto* item = new QListWidgetItem(qstr(name), schedules_);
    item->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
    item->setCheckState(Qt::Unchecked);
  }
  schedules_->setMaximumHeight(static_cast<int>(schedule_names.size()) * 22 + 8);
  connect(schedules_, &QListWidget::itemChanged, this, [this] { emit changed(); });
  list_layout->addWidget(schedules_);
  engine_ = new QComboBox;
  engine_->setObjectName("engine");
  for (const std::string& label : engines) engine_->addItem(qstr(label));
  engine_->setToolTip("the evaluator is instant; another engine runs each schedule on a worker thread and is shown "
                      "under the evaluator's result, with the per-device span difference in the table");
  engine_->setEnabled(engines.size() > 1);
  connect(engine_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { emit changed(); });
  auto* engine_row = new QHBoxLayout;
  engine_row->addWidget(new QLabel("also run on"));
  engine_row->addWidget(engine_, 1);
  list_layout->addLayout(engine_row);
  return chosen;
}

void ExplorerPanel::add_cost(QFormLayout* form, const char* name, const QString& tip,
                             std::vector<double> ProblemSpec::*field) {
  CostControl control;
  control.field = field;
  control.label = new QLabel(name);
  control.label->setToolTip(tip);
  control.spin = new QDoubleSpinBox;
  control.spin->setObjectName(name);
  control.spin->setRange(0, 1e9);
  control.spin->setDecimals(3);
  control.spin->setSingleStep(0.1);
  control.spin->setToolTip(tip);
  control.slider = new QSlider(Qt::Horizontal);
  control.slider->setObjectName(QString(name) + "_slider");
  control.slider->setRange(0, kSliderSteps);
  form->addRow(control.label, pair_widget(control.spin, control.slider));
  costs_.push_back(control);
  const std::size_t index = costs_.size() - 1;
  connect(control.spin, qOverload<double>(&QDoubleSpinBox::valueChanged), this,
          [this, index](double value) { cost_edited(costs_[index], value); });
  connect(control.slider, &QSlider::valueChanged, this, [this, index](int step) {
    CostControl& c = costs_[index];
    c.spin->setValue(step * c.slider_step);  // cost_edited follows through the spin box
  });
}

void ExplorerPanel::show_cost(CostControl& control) {
  const std::vector<double>& values = spec_.*(control.field);
  const double value = values.empty() ? 0.0 : values.front();
  // The slider covers 0 .. about 4x the value (at least 0 .. 20) in round steps.
  control.slider_step = nice_step(std::max(value * 4, 20.0) / kSliderSteps);
  const QSignalBlocker block_spin(control.spin);
  const QSignalBlocker block_slider(control.slider);
  control.spin->setValue(value);
  control.slider->setValue(static_cast<int>(std::lround(std::min(value / control.slider_step, double(kSliderSteps)))));
  const QString name = control.spin->objectName();
  if (values.size() > 1) {
    control.label->setText(name + " *");
    control.label->setToolTip(QString("per-device or per-stage values from the file (first shown); editing sets one "
                                      "value for all: %1 values")
                                  .arg(values.size()));
  } else {
    control.label->setText(name);
  }
}

void ExplorerPanel::cost_edited(CostControl& control, double value) {
  // No all-to-all is an empty t_a2a, as when the flag is not given.
  if (control.field == &ProblemSpec::t_a2a && value == 0) {
    spec_.t_a2a.clear();
  } else {
    spec_.*(control.field) = {value};
  }
  if (model_choice()) explicit_fields_.insert(control.spin->objectName().toStdString());
  {
    const QSignalBlocker block(control.slider);
    control.slider->setValue(static_cast<int>(std::lround(std::min(value / control.slider_step, double(kSliderSteps)))));
  }
  control.label->setText(control.spin->objectName());
  refresh_device_table();
  emit changed();
}

void ExplorerPanel::shape_edited() {
  spec_.devices = p_->value();
  spec_.microbatches = m_->value();
  spec_.chunks = chunks_->value();
  const int placement = placement_->currentIndex();
  if (placement <= 0) {
    spec_.placement.reset();
  } else {
    spec_.placement = static_cast<Placement>(placement - 1);
  }
  // Per-device arrays no longer fit a new p: keep their first value for every device.
  for (CostControl& control : costs_) {
    auto& values = spec_.*(control.field);
    if (values.size() > 1 && values.size() != static_cast<std::size_t>(spec_.devices) &&
        values.size() != static_cast<std::size_t>(spec_.devices * spec_.chunks)) {
      values.resize(1);
      show_cost(control);
    }
  }
  refresh_device_table();
  emit changed();
}

void ExplorerPanel::refresh_device_table() {
  if (!device_costs_) return;
  const QSignalBlocker block(device_costs_);
  const int p = spec_.devices;
  device_costs_->setRowCount(p);
  for (int d = 0; d < p; ++d) {
    device_costs_->setVerticalHeaderItem(d, new QTableWidgetItem(QString("d%1").arg(d)));
    for (int column = 0; column < 3; ++column) {
      const std::vector<double>& values = spec_.*(costs_[static_cast<std::size_t>(column)].field);
      auto* item = new QTableWidgetItem;
      if (values.size() == 1 || values.size() == static_cast<std::size_t>(p)) {
        item->setText(QString::number(values.size() == 1 ? values[0] : values[static_cast<std::size_t>(d)], 'g', 6));
      } else {
        // Per-stage values (from a file): shown in the spin box tooltip, not editable per device here.
        item->setText("per stage");
        item->setFlags(Qt::ItemIsEnabled);
      }
      device_costs_->setItem(d, column, item);
    }
  }
}

void ExplorerPanel::device_cell_edited(int row, int column) {
  CostControl& control = costs_[static_cast<std::size_t>(column)];
  std::vector<double>& values = spec_.*(control.field);
  bool ok = false;
  const double value = device_costs_->item(row, column)->text().toDouble(&ok);
  const auto p = static_cast<std::size_t>(spec_.devices);
  if (!ok || value < 0 || (values.size() != 1 && values.size() != p)) {
    emit message(QString("per-device %1 of d%2: expected a number >= 0").arg(control.spin->objectName()).arg(row));
    refresh_device_table();
    return;
  }
  if (values.size() == 1) values.assign(p, values[0]);
  values[static_cast<std::size_t>(row)] = value;
  if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; })) values.resize(1);
  if (model_choice()) explicit_fields_.insert(control.spin->objectName().toStdString());
  show_cost(control);
  refresh_device_table();
  emit changed();
}

void ExplorerPanel::limit_edited() {
  const std::string text = limit_->text().trimmed().toStdString();
  try {
    std::optional<MemoryLimit> limit;
    if (!text.empty()) limit = MemoryLimit::parse(text, "memory limit");
    limit_->setStyleSheet("");
    limit_->setToolTip("activation memory limit: a number, or a multiple of p x M_B written like 1p, 2p");
    const bool same = (limit.has_value() == spec_.mem_limit.has_value()) &&
                      (!limit || (limit->value == spec_.mem_limit->value && limit->times_p == spec_.mem_limit->times_p));
    if (same) return;
    spec_.mem_limit = limit;
    if (model_choice()) explicit_fields_.insert("mem_limit");
    emit changed();
  } catch (const Error& e) {
    limit_->setStyleSheet("QLineEdit { background: #f8d0d0; }");
    limit_->setToolTip(e.what());
    emit message(qstr(e.what()));
  }
}

void ExplorerPanel::set_spec(const ProblemSpec& spec) {
  spec_ = spec;
  {
    const QSignalBlocker b1(p_), b2(p_slider_), b3(m_), b4(m_slider_), b5(chunks_), b6(placement_);
    p_->setValue(spec.devices);
    p_slider_->setValue(spec.devices);
    m_->setValue(spec.microbatches);
    m_slider_->setValue(spec.microbatches);
    chunks_->setValue(spec.chunks);
    placement_->setCurrentIndex(spec.placement ? static_cast<int>(*spec.placement) + 1 : 0);
  }
  for (CostControl& control : costs_) show_cost(control);
  show_scalar_fields();
  refresh_device_table();
  const QSignalBlocker block(limit_);
  limit_->setText(spec.mem_limit ? qstr(spec.mem_limit->to_string()) : QString());
  limit_->setStyleSheet("");
}

std::vector<std::string> ExplorerPanel::selected_schedules() const {
  std::vector<std::string> names;
  for (int i = 0; i < schedules_->count(); ++i) {
    if (schedules_->item(i)->checkState() == Qt::Checked) names.push_back(schedules_->item(i)->text().toStdString());
  }
  return names;
}

std::optional<ModelChoice> ExplorerPanel::model_choice() const {
  if (!model_ || model_->currentIndex() <= 0 || hardware_->currentIndex() < 0) return std::nullopt;
  return ModelChoice{model_->currentText().toStdString(), hardware_->currentText().toStdString(), microbatch_size_->value()};
}

void ExplorerPanel::set_model_choice(const std::optional<ModelChoice>& choice) {
  if (!model_) return;
  const QSignalBlocker b1(model_), b2(hardware_), b3(microbatch_size_);
  explicit_fields_.clear();
  if (!choice) {
    model_->setCurrentIndex(0);
  } else {
    model_->setCurrentIndex(std::max(0, model_->findText(qstr(choice->model))));
    hardware_->setCurrentIndex(std::max(0, hardware_->findText(qstr(choice->hardware))));
    microbatch_size_->setValue(choice->microbatch_size);
  }
  hardware_->setEnabled(model_->currentIndex() > 0);
  microbatch_size_->setEnabled(model_->currentIndex() > 0);
}

void ExplorerPanel::show_scalar_fields() {
  const QSignalBlocker b1(overlap_), b2(overlap_slider_), b3(bytes_act_);
  bytes_act_->setValue(spec_.bytes_act);
  overlap_->setValue(spec_.overlap);
  overlap_slider_->setValue(static_cast<int>(std::lround(spec_.overlap * kOverlapSteps)));
}

void ExplorerPanel::show_derived(const ProblemSpec& derived) {
  spec_ = derived;
  for (CostControl& control : costs_) show_cost(control);
  show_scalar_fields();
  refresh_device_table();
  const QSignalBlocker block(limit_);
  limit_->setText(spec_.mem_limit ? qstr(spec_.mem_limit->to_string()) : QString());
}

int ExplorerPanel::engine_index() const { return std::max(0, engine_->currentIndex()); }

void ExplorerPanel::set_engine_index(int index) {
  const QSignalBlocker block(engine_);
  engine_->setCurrentIndex(index);
}

void ExplorerPanel::set_selected_schedules(const std::vector<std::string>& names) {
  const QSignalBlocker block(schedules_);
  for (int i = 0; i < schedules_->count(); ++i) {
    QListWidgetItem* item = schedules_->item(i);
    const bool wanted = std::find(names.begin(), names.end(), item->text().toStdString()) != names.end();
    item->setCheckState(wanted ? Qt::Checked : Qt::Unchecked);
  }
}

}  // namespace zb::view
