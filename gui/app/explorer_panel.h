// The explorer's side panel: the problem (p, m, chunks, placement, costs, memory limit) with spin
// boxes and sliders, and the schedules to compare. Emits changed() on every edit.
#pragma once

#include <QWidget>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/core/problem_spec.h"
#include "gui/viewer_core/model_presets.h"

class QComboBox;
class QFormLayout;
class QGroupBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSlider;
class QSpinBox;
class QTableWidget;

namespace zb::view {

class ExplorerPanel : public QWidget {
  Q_OBJECT

 public:
  // `engines`: labels of the engines offered (the first is the evaluator).
  ExplorerPanel(const std::vector<std::string>& schedule_names, const std::vector<std::string>& engines = {"evaluator"},
                QWidget* parent = nullptr);

  const ProblemSpec& spec() const { return spec_; }
  // Shows a problem (from a scenario or a schedule file) without emitting changed().
  void set_spec(const ProblemSpec& spec);

  std::vector<std::string> selected_schedules() const;
  // The model preset chosen (absent: costs come from the spin boxes alone).
  std::optional<ModelChoice> model_choice() const;
  void set_model_choice(const std::optional<ModelChoice>& choice);
  // Cost fields edited since the model was chosen: those keep the user's values ("t_f", "mem_limit").
  const std::set<std::string>& explicit_fields() const { return explicit_fields_; }
  // Shows costs derived from the model without emitting changed() (shape fields are unchanged).
  void show_derived(const ProblemSpec& derived);

  // The engine chosen (index into the labels given); 0 is the evaluator.
  int engine_index() const;
  void set_engine_index(int index);
  // Checks exactly these (unknown names are ignored) without emitting changed().
  void set_selected_schedules(const std::vector<std::string>& names);

 signals:
  void changed();
  // A message for the status bar (e.g. a memory limit that does not parse).
  void message(const QString& text);

 private:
  struct CostControl {
    QLabel* label = nullptr;
    QDoubleSpinBox* spin = nullptr;
    QSlider* slider = nullptr;
    double slider_step = 0.05;  // value of one slider step; rescaled to the value shown
    std::vector<double> ProblemSpec::*field = nullptr;
  };

  // The panel's groups of widgets, top to bottom: the problem (shape, costs, overlap, bytes per
  // activation, memory limit), the per-device costs, the model preset, the schedules and engine.
  QGroupBox* problem_group();
  void add_shape_rows(QFormLayout* form);  // p, m, chunks and placement
  void add_overlap_row(QFormLayout* form);  // a spin box and a slider in steps of 0.01
  QGroupBox* device_costs_group();
  QGroupBox* preset_group();
  QGroupBox* schedules_group(const std::vector<std::string>& schedule_names, const std::vector<std::string>& engines);
  void add_cost(QFormLayout* form, const char* name, const QString& tip, std::vector<double> ProblemSpec::*field);
  void show_cost(CostControl& control);
  void cost_edited(CostControl& control, double value);
  void show_scalar_fields();  // overlap and bytes_act from spec_
  void limit_edited();
  void shape_edited();
  // The per-device table mirrors spec_; edits of a cell make that field a per-device array.
  void refresh_device_table();
  void device_cell_edited(int row, int column);

  ProblemSpec spec_;
  QSpinBox* p_ = nullptr;
  QSlider* p_slider_ = nullptr;
  QSpinBox* m_ = nullptr;
  QSlider* m_slider_ = nullptr;
  QSpinBox* chunks_ = nullptr;
  QComboBox* placement_ = nullptr;
  std::vector<CostControl> costs_;
  QDoubleSpinBox* overlap_ = nullptr;
  QSlider* overlap_slider_ = nullptr;
  QDoubleSpinBox* bytes_act_ = nullptr;
  QLineEdit* limit_ = nullptr;
  QListWidget* schedules_ = nullptr;
  QComboBox* engine_ = nullptr;
  QTableWidget* device_costs_ = nullptr;
  QComboBox* model_ = nullptr;
  QComboBox* hardware_ = nullptr;
  QSpinBox* microbatch_size_ = nullptr;
  std::set<std::string> explicit_fields_;
};

}  // namespace zb::view
